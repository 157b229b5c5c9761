// Package s3pool is the S3 remote pool: objpool's layout and fenced commit
// protocol over github.com/aws/aws-sdk-go-v2/service/s3, for AWS S3 or any
// S3-compatible store that honours If-None-Match and If-Match on PUT.
package s3pool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"clink/state/objpool"
)

// Store is an objpool.ObjectStore over one bucket and key prefix.
type Store struct {
	client   *s3.Client
	bucket   string
	prefix   string
	endpoint string
}

var (
	_ objpool.ObjectStore = (*Store)(nil)
	_ objpool.FilePutter  = (*Store)(nil)
)

// String names the bucket, prefix and endpoint (never credentials).
func (s *Store) String() string {
	ep := s.endpoint
	if ep == "" {
		ep = "AWS default endpoint"
	}
	return fmt.Sprintf("s3://%s/%s (endpoint %s)", s.bucket, s.prefix, ep)
}

func (s *Store) key(k string) string {
	if s.prefix == "" {
		return k
	}
	return s.prefix + "/" + k
}

// Get reads a whole object.
func (s *Store) Get(ctx context.Context, key string) ([]byte, string, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: aws.String(s.key(key))})
	if err != nil {
		return nil, "", s.classify("get", key, err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, "", fmt.Errorf("get %s: read body: %v: %w", s.key(key), err, objpool.ErrTransient)
	}
	return b, aws.ToString(out.ETag), nil
}

// GetRange reads length bytes at off with a Range request; the object's
// size comes from the response's Content-Range.
func (s *Store) GetRange(ctx context.Context, key string, off, length int64) ([]byte, int64, error) {
	if length <= 0 {
		return nil, -1, nil
	}
	rng := fmt.Sprintf("bytes=%d-%d", off, off+length-1)
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: aws.String(s.key(key)), Range: &rng})
	if err != nil {
		return nil, -1, s.classify("get range", key, err)
	}
	defer out.Body.Close()
	size := totalSize(aws.ToString(out.ContentRange))
	b, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, size, fmt.Errorf("get %s %s: read body: %v: %w", s.key(key), rng, err, objpool.ErrTransient)
	}
	if int64(len(b)) != length {
		if size >= 0 && size < off+length {
			return nil, size, fmt.Errorf("get %s %s of %d bytes: %w", s.key(key), rng, size, objpool.ErrShort)
		}
		return nil, size, fmt.Errorf("get %s %s: got %d bytes, want %d: %w", s.key(key), rng, len(b), length, objpool.ErrTransient)
	}
	return b, size, nil
}

// totalSize reads the object size out of a Content-Range header ("bytes
// 0-99/1234"); -1 when absent or unknown ("*").
func totalSize(contentRange string) int64 {
	i := strings.LastIndexByte(contentRange, '/')
	if i < 0 {
		return -1
	}
	n, err := strconv.ParseInt(contentRange[i+1:], 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// PutIfAbsent writes with If-None-Match: *.
func (s *Store) PutIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	return s.put(ctx, "put if absent", key, data, &s3.PutObjectInput{IfNoneMatch: aws.String("*")})
}

// PutFileIfAbsent writes the first size bytes of f with If-None-Match: *,
// streaming them from the file (objpool.FilePutter), so a compaction's
// output run is never in memory.
func (s *Store) PutFileIfAbsent(ctx context.Context, key string, f *os.File, size int64) (string, error) {
	in := &s3.PutObjectInput{IfNoneMatch: aws.String("*"), Bucket: &s.bucket, Key: aws.String(s.key(key)),
		Body: io.NewSectionReader(f, 0, size), ContentLength: aws.Int64(size)}
	out, err := s.client.PutObject(ctx, in)
	if err != nil {
		return "", s.classify("put if absent", key, err)
	}
	return aws.ToString(out.ETag), nil
}

// PutIfMatch writes with If-Match: etag.
func (s *Store) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	return s.put(ctx, "put if match", key, data, &s3.PutObjectInput{IfMatch: aws.String(etag)})
}

func (s *Store) put(ctx context.Context, op, key string, data []byte, in *s3.PutObjectInput) (string, error) {
	in.Bucket, in.Key = &s.bucket, aws.String(s.key(key))
	in.Body = bytes.NewReader(data)
	in.ContentLength = aws.Int64(int64(len(data)))
	out, err := s.client.PutObject(ctx, in)
	if err != nil {
		return "", s.classify(op, key, err)
	}
	return aws.ToString(out.ETag), nil
}

// Delete removes an object.
func (s *Store) Delete(ctx context.Context, key string) error {
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: aws.String(s.key(key))})
	if err != nil {
		return s.classify("delete", key, err)
	}
	return nil
}

// List pages through ListObjectsV2 under the store's prefix and returns
// the keys relative to it. It needs s3:ListBucket on the bucket; without
// it garbage collection falls back to the keys manifests name.
func (s *Store) List(ctx context.Context, prefix string) ([]string, error) {
	full := s.key(prefix)
	var keys []string
	pages := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: &full})
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return nil, s.classify("list", prefix, err)
		}
		for _, o := range out.Contents {
			k := aws.ToString(o.Key)
			if s.prefix != "" {
				k = strings.TrimPrefix(k, s.prefix+"/")
			}
			keys = append(keys, k)
		}
	}
	return keys, nil
}

// classify wraps an SDK error in the objpool error class it belongs to,
// with the bucket, key and endpoint, and a hint for the ones users fix.
func (s *Store) classify(op, key string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("s3 %s %s: %w", op, s.key(key), err)
	}
	code, status := "", 0
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code = ae.ErrorCode()
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	class, hint := classOf(code, status)
	where := fmt.Sprintf("s3 %s %s", op, s.key(key))
	if hint != "" {
		return fmt.Errorf("%s: %w (%s): %v", where, class, hint, err)
	}
	return fmt.Errorf("%s: %w: %v", where, class, err)
}

// classOf maps an S3 error code and HTTP status to an error class and a
// user hint. status 0 means no response arrived (a dropped connection).
func classOf(code string, status int) (error, string) {
	switch {
	case code == "NoSuchBucket":
		return objpool.ErrNoBucket, "create the bucket or fix the URI"
	case code == "NoSuchKey" || (status == http.StatusNotFound && code != ""):
		return objpool.ErrNotFound, ""
	case code == "PreconditionFailed" || status == http.StatusPreconditionFailed:
		return objpool.ErrPrecondition, ""
	case code == "InvalidRange" || status == http.StatusRequestedRangeNotSatisfiable:
		return objpool.ErrShort, ""
	case code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch" || code == "ExpiredToken" ||
		code == "InvalidToken" || code == "TokenRefreshRequired" || code == "InvalidSecurity":
		return objpool.ErrBadCredentials, "check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN"
	case code == "AccessDenied" || code == "AllAccessDisabled" || status == http.StatusForbidden:
		return objpool.ErrAccessDenied, "the credentials need s3:GetObject and s3:PutObject on the bucket and prefix"
	case status == 0, status >= 500, status == http.StatusConflict, status == http.StatusTooManyRequests,
		code == "SlowDown", code == "RequestTimeout", code == "InternalError":
		return objpool.ErrTransient, ""
	case status == http.StatusNotFound:
		return objpool.ErrNotFound, ""
	}
	return errors.New("s3 request failed"), ""
}

// prefixOf trims slashes from a key prefix.
func prefixOf(p string) string { return strings.Trim(p, "/") }
