// Verifying a linkhooks delivery in Go (standard library only).
// Usage: go run verify.go <body file> <secret> <X-Service-Signature value>
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
)

// Verify reports whether signature is the HMAC-SHA256 of the raw body under secret.
// In net/http: body, _ := io.ReadAll(r.Body); Verify(body, secret, r.Header.Get("X-Service-Signature"))
func Verify(rawBody []byte, secret, signature string) bool {
	given, err := hex.DecodeString(signature)
	if err != nil || len(given) != sha256.Size {
		return false // 64 hex digits, no "sha256=" prefix
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(rawBody)
	return hmac.Equal(mac.Sum(nil), given)
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: go run verify.go <body file> <secret> <X-Service-Signature value>")
		os.Exit(2)
	}
	body, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if Verify(body, os.Args[2], os.Args[3]) {
		fmt.Println("valid")
	} else {
		fmt.Println("invalid")
		os.Exit(1)
	}
}
