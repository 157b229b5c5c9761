//go:build tools

// Package tools pins the SeaweedFS version whose `weed` binary clink's S3
// integration tests run against (scripts/s3.sh build). It is a separate
// module so the main module's dependency graph stays small.
package tools

import _ "github.com/seaweedfs/seaweedfs/weed"
