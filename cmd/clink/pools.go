package main

// The binary links the durable pools: remote-read:// (S3) and disagg-file://.
import _ "clink/state/pools"
