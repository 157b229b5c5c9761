//go:build !linux

package ops

import "errors"

// DefaultHTTPOpener is unavailable off Linux: the HTTP pool runs on
// io_uring's package, which is Linux-only. Sessions can inject their own.
func DefaultHTTPOpener(HTTPClientOptions) (HTTPClient, error) {
	return nil, errors.New("http lookups need Linux (uring.HTTPPool)")
}
