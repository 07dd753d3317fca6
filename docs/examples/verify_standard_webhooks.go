// Verifying a linkhooks delivery in the Standard Webhooks form, in Go (standard library only).
// Usage: go run verify_standard_webhooks.go <body file> <secret> <webhook-id> <webhook-timestamp>
//                                           <webhook-signature> [now, Unix seconds]
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

const tolerance = 300 // seconds either way, as the SDK's default

var unixSeconds = regexp.MustCompile(`^[0-9]{1,12}$`)

// VerifyStandard reports whether the webhook-* headers sign rawBody under secret at about now.
// In net/http: VerifyStandard(body, secret, r.Header.Get("webhook-id"),
// r.Header.Get("webhook-timestamp"), r.Header.Get("webhook-signature"), time.Now())
func VerifyStandard(rawBody []byte, secret, id, timestamp, signature string, now time.Time) bool {
	if id == "" || timestamp == "" || signature == "" {
		return false // all three headers are required: never fall back to X-Service-Signature
	}
	if !unixSeconds.MatchString(timestamp) {
		return false
	}
	ts, _ := strconv.ParseInt(timestamp, 10, 64)
	if skew := now.Unix() - ts; skew > tolerance || skew < -tolerance {
		return false // too old (a replay?) or too far ahead: check this server's clock
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return false // not whsec_ + standard base64: an earlier secret, rotate it
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + timestamp + "."))
	mac.Write(rawBody)
	expected := mac.Sum(nil)
	// One "v1,<base64>" entry per valid secret, space-separated, during a rotation.
	for _, entry := range strings.Split(signature, " ") {
		version, value, found := strings.Cut(entry, ",")
		if !found || version != "v1" {
			continue
		}
		given, err := base64.StdEncoding.DecodeString(value)
		if err == nil && hmac.Equal(expected, given) {
			return true
		}
	}
	return false
}

func main() {
	if len(os.Args) != 6 && len(os.Args) != 7 {
		fmt.Fprintln(os.Stderr, "usage: go run verify_standard_webhooks.go <body file> <secret> <webhook-id> <webhook-timestamp> <webhook-signature> [now]")
		os.Exit(2)
	}
	body, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	now := time.Now()
	if len(os.Args) > 6 {
		seconds, err := strconv.ParseInt(os.Args[6], 10, 64)
		if err != nil {
			panic(err)
		}
		now = time.Unix(seconds, 0)
	}
	if VerifyStandard(body, os.Args[2], os.Args[3], os.Args[4], os.Args[5], now) {
		fmt.Println("valid")
	} else {
		fmt.Println("invalid")
		os.Exit(1)
	}
}
