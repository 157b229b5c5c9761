// Package pools links the durable remote pools into the state URI factory.
// Importing it for its side effect registers remote-read:// (S3 through
// aws-sdk-go-v2) and disagg-file:// (a local directory), so packages that
// only need memory:// and disagg-local:// do not pull in the AWS SDK.
package pools

import (
	"clink/state/filepool"
	"clink/state/s3pool"
	"clink/state/stateuri"
)

func init() {
	stateuri.RegisterPool(stateuri.RemoteRead, s3pool.Open)
	stateuri.RegisterPool(stateuri.DisaggFile, filepool.Open)
}
