package objpool_test

import (
	"testing"

	"clink/state/objpool"
	"clink/state/objpool/objpooltest"
)

func TestMemStore(t *testing.T) {
	objpooltest.Run(t, func(t *testing.T) objpool.ObjectStore { return objpool.NewMemStore() })
}
