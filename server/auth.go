package server

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"
)

// scramIterations is the PBKDF2 work factor of the SCRAM exchange
// (PostgreSQL's default).
const scramIterations = 4096

// errAuth is a failed password exchange.
var errAuth = errors.New("password authentication failed")

// scramAuth runs the server side of SCRAM-SHA-256 (RFC 5802, 7677) over
// the backend: the password never crosses the wire, and the client
// checks the server knows it too.
func scramAuth(be *pgproto3.Backend, password string) error {
	salt := make([]byte, 16)
	nonce := make([]byte, 18)
	if _, err := rand.Read(salt); err != nil {
		return err
	}
	if _, err := rand.Read(nonce); err != nil {
		return err
	}
	be.Send(&pgproto3.AuthenticationSASL{AuthMechanisms: []string{"SCRAM-SHA-256"}})
	if err := be.Flush(); err != nil {
		return err
	}
	if err := be.SetAuthType(pgproto3.AuthTypeSASL); err != nil {
		return err
	}
	msg, err := be.Receive()
	if err != nil {
		return err
	}
	first, ok := msg.(*pgproto3.SASLInitialResponse)
	if !ok || first.AuthMechanism != "SCRAM-SHA-256" {
		return fmt.Errorf("%w: want a SCRAM-SHA-256 initial response, got %T", errAuth, msg)
	}
	clientFirst := string(first.Data)
	gs2, bare, ok := cutN(clientFirst, ",", 2)
	if !ok || strings.HasPrefix(gs2, "p") {
		return fmt.Errorf("%w: unsupported SCRAM header (channel binding is not offered)", errAuth)
	}
	cnonce := scramAttr(bare, "r")
	if cnonce == "" {
		return fmt.Errorf("%w: client nonce missing", errAuth)
	}
	fullNonce := cnonce + base64.RawStdEncoding.EncodeToString(nonce)
	serverFirst := fmt.Sprintf("r=%s,s=%s,i=%d", fullNonce, base64.StdEncoding.EncodeToString(salt), scramIterations)
	be.Send(&pgproto3.AuthenticationSASLContinue{Data: []byte(serverFirst)})
	if err := be.Flush(); err != nil {
		return err
	}
	if err := be.SetAuthType(pgproto3.AuthTypeSASLContinue); err != nil {
		return err
	}
	msg, err = be.Receive()
	if err != nil {
		return err
	}
	final, ok := msg.(*pgproto3.SASLResponse)
	if !ok {
		return fmt.Errorf("%w: want a SCRAM response, got %T", errAuth, msg)
	}
	clientFinal := string(final.Data)
	i := strings.LastIndex(clientFinal, ",p=")
	if i < 0 || scramAttr(clientFinal, "r") != fullNonce {
		return fmt.Errorf("%w: bad SCRAM final message", errAuth)
	}
	proof, err := base64.StdEncoding.DecodeString(clientFinal[i+3:])
	if err != nil || len(proof) != sha256.Size {
		return fmt.Errorf("%w: bad SCRAM proof", errAuth)
	}
	salted, err := pbkdf2.Key(sha256.New, password, salt, scramIterations, sha256.Size)
	if err != nil {
		return err
	}
	clientKey := hmacSum(salted, "Client Key")
	storedKey := sha256.Sum256(clientKey)
	authMessage := bare + "," + serverFirst + "," + clientFinal[:i]
	sig := hmacSum(storedKey[:], authMessage)
	got := make([]byte, len(proof))
	for k := range proof {
		got[k] = proof[k] ^ sig[k]
	}
	gotStored := sha256.Sum256(got)
	if subtle.ConstantTimeCompare(gotStored[:], storedKey[:]) != 1 {
		return errAuth
	}
	serverSig := hmacSum(hmacSum(salted, "Server Key"), authMessage)
	be.Send(&pgproto3.AuthenticationSASLFinal{Data: []byte("v=" + base64.StdEncoding.EncodeToString(serverSig))})
	return nil
}

func hmacSum(key []byte, msg string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// cutN splits s after its n-th sep: the head (without the sep) and rest.
func cutN(s, sep string, n int) (string, string, bool) {
	at := 0
	for k := 0; k < n; k++ {
		i := strings.Index(s[at:], sep)
		if i < 0 {
			return "", "", false
		}
		at += i + len(sep)
	}
	return s[:at-len(sep)], s[at:], true
}

// scramAttr returns attribute key's value in a SCRAM message.
func scramAttr(msg, key string) string {
	for _, kv := range strings.Split(msg, ",") {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}
