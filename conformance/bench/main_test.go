package main

import (
	"os"
	"testing"

	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
)

// TestMain runs the tests through pgtest.Main, which drops the migrated template database the
// tests' databases are copied from.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m.Run)) }
