//go:build ignore

// mockserve serves a mockapi script on 127.0.0.1 for observing the real
// CLI by hand (observe.sh): it writes the base URL to -url, serves until
// SIGTERM or -t, then writes every request's summary and body under
// -dump.
//
//	go run ./internal/dev/e2e/testdata/observed/tools/mockserve.go -script S -url F -dump D
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/orch-hook/orch-hook/internal/dev/mockapi"
)

func main() {
	script := flag.String("script", "", "mockapi script (.txtar)")
	dur := flag.Duration("t", 90*time.Second, "how long to serve")
	urlFile := flag.String("url", "", "file to write the base URL to")
	dump := flag.String("dump", "", "directory for the requests")
	flag.Parse()
	s, err := mockapi.Load(*script)
	if err != nil {
		log.Fatal(err)
	}
	srv, err := mockapi.Start(mockapi.Options{Script: s, Timeout: *dur, MaxRequests: 200, Logf: log.Printf})
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*urlFile, []byte(srv.URL()), 0o644); err != nil {
		log.Fatal(err)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	select {
	case <-srv.Done():
	case <-sig:
		_ = srv.Close()
	}
	if *dump == "" {
		return
	}
	if err := os.MkdirAll(*dump, 0o755); err != nil {
		log.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(*dump, "summary.txt"), []byte(srv.Summary()), 0o644)
	for _, r := range srv.Requests() {
		b, _ := json.MarshalIndent(json.RawMessage(r.Body), "", " ")
		_ = os.WriteFile(filepath.Join(*dump, fmt.Sprintf("req-%03d-%s-t%d.json", r.Seq, r.Conversation, r.Turn)), b, 0o644)
	}
}
