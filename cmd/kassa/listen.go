package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/kassa-pay/kassa/openapi/webhook"
)

// listen is `kassa listen`: a local webhook receiver for development. It verifies every
// delivery's Service-Signature with the Go SDK's verifier (openapi/webhook), exactly as a
// merchant's server would, prints one line per event, and answers 200 when the signature holds
// and 400 when it does not (so Kassa records the failure and retries). It needs no database.
func listen(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("listen", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:4000", "address to receive webhooks on")
	secret := fs.String("secret", os.Getenv("KASSA_LISTEN_SECRET"),
		"the endpoint's signing secret (whsec_…; env KASSA_LISTEN_SECRET); repeatable by comma for a rotation")
	tolerance := fs.Duration("tolerance", webhook.DefaultTolerance, "largest accepted age of a signature's timestamp")
	body := fs.Bool("print-body", false, "print each event's JSON body")
	if err := fs.Parse(args); err != nil {
		return err
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	h := &receiver{secrets: splitSecrets(*secret), tolerance: *tolerance, printBody: *body, out: out, now: time.Now}
	fmt.Fprintf(out, "Receiving webhooks on http://%s/ (any path).\n", l.Addr())
	if len(h.secrets) == 0 {
		fmt.Fprintln(out, "No --secret given: events are printed but signatures are NOT checked and every delivery is refused with 400.")
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func splitSecrets(s string) []string {
	var out []string
	for _, p := range bytes.Split([]byte(s), []byte(",")) {
		if p = bytes.TrimSpace(p); len(p) > 0 {
			out = append(out, string(p))
		}
	}
	return out
}

// receiver handles deliveries. It is an http.Handler so tests drive it with httptest.
type receiver struct {
	secrets   []string
	tolerance time.Duration
	printBody bool
	now       func() time.Time
	mu        sync.Mutex
	out       io.Writer
}

func (h *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	payload, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	sig := r.Header.Get(webhook.SignatureHeader)
	var (
		ev     *webhook.Event
		verErr error = errors.New("no --secret given")
	)
	for _, s := range h.secrets {
		if ev, verErr = webhook.ConstructEventAt(payload, sig, s, h.tolerance, h.now()); verErr == nil {
			break
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	stamp := h.now().Format("15:04:05")
	if verErr != nil {
		fmt.Fprintf(h.out, "%s  %-40s %s  attempt %s  signature NOT verified: %v\n", stamp,
			r.Header.Get(webhook.EventTypeHeader), r.Header.Get(webhook.EventIDHeader),
			r.Header.Get(webhook.AttemptHeader), verErr)
		http.Error(w, "signature not verified", http.StatusBadRequest)
		return
	}
	fmt.Fprintf(h.out, "%s  %-40s %s  %s  attempt %s  signature verified\n", stamp, ev.Type, ev.ID,
		ev.Environment, r.Header.Get(webhook.AttemptHeader))
	if h.printBody {
		var pretty bytes.Buffer
		if json.Indent(&pretty, payload, "    ", "  ") == nil {
			fmt.Fprintf(h.out, "    %s\n", pretty.String())
		}
	}
	w.WriteHeader(http.StatusOK)
}
