package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestCheckListen(t *testing.T) {
	cases := []struct {
		addr     string
		password bool
		wantErr  string
	}{
		{"127.0.0.1:4566", false, ""},
		{"[::1]:4566", false, ""},
		{"localhost:4566", false, ""},
		{"0.0.0.0:4566", false, "is not a loopback address: set a password with --password-file FILE or the CLINK_PASSWORD"},
		{":4566", false, "is not a loopback address"},
		{"10.1.2.3:4566", false, "is not a loopback address"},
		{"0.0.0.0:4566", true, ""},
		{"nonsense", false, `--listen "nonsense"`},
	}
	for _, tc := range cases {
		err := CheckListen(tc.addr, tc.password)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("CheckListen(%q, %v) = %v, want %q", tc.addr, tc.password, err, tc.wantErr)
		}
	}
	if _, err := New(Config{StateURI: "memory://", Listen: "0.0.0.0:0", CheckpointInterval: time.Second}); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("New on 0.0.0.0 without a password: %v", err)
	}
}

// TestSCRAM: with a password, pgx and psql authenticate with
// SCRAM-SHA-256; a wrong password is refused with SQLSTATE 28P01.
func TestSCRAM(t *testing.T) {
	ts := startServer(t, Config{Password: "s3cret pass"})
	host, port, _ := net.SplitHostPort(ts.addr)
	ctx := context.Background()
	cases := []struct {
		password string
		ok       bool
	}{{"s3cret pass", true}, {"wrong", false}, {"", false}}
	for _, tc := range cases {
		cfg, err := pgx.ParseConfig("postgres://clink@" + host + ":" + port + "/clink?sslmode=disable")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Password = tc.password
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if tc.ok {
			if err != nil {
				t.Fatalf("password %q: %v", tc.password, err)
			}
			var one int
			if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
				t.Fatalf("query after auth: %v", err)
			}
			conn.Close(ctx)
			continue
		}
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "28P01" {
			t.Errorf("password %q: err = %v, want SQLSTATE 28P01", tc.password, err)
		}
	}
	cmd := exec.Command("psql", "-X", "-h", "127.0.0.1", "-p", port, "-U", "clink", "-d", "clink", "-Atc", "SELECT 41 + 1")
	cmd.Env = append(os.Environ(), "PGPASSWORD=s3cret pass", "PGSSLMODE=disable")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "42" {
		t.Fatalf("psql with the password: %v: %s", err, out)
	}
}

// TestTLS: a client asking for TLS gets it when the server has a key pair.
func TestTLS(t *testing.T) {
	ts := startServer(t, Config{TLS: selfSigned(t)})
	host, port, _ := net.SplitHostPort(ts.addr)
	conn, err := pgx.Connect(context.Background(), "postgres://clink@"+host+":"+port+"/clink?sslmode=require")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, ok := conn.PgConn().Conn().(*tls.Conn); !ok {
		t.Fatalf("connection is %T, want *tls.Conn", conn.PgConn().Conn())
	}
	var one int
	if err := conn.QueryRow(context.Background(), "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("query over TLS: %v", err)
	}
}

// selfSigned makes a throwaway certificate for 127.0.0.1.
func selfSigned(t *testing.T) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "clink test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}
