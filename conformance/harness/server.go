// Package harness runs the conformance suite's target: either a server named by KASSA_BASE_URL
// (with KASSA_OPERATOR_TOKEN), or a fresh `kassa serve` process it builds and starts on a
// fresh database. It also provides the validating HTTP transport and the per-section summary.
package harness

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
)

// Target is a running Kassa server.
type Target struct {
	BaseURL       string // API listener, e.g. http://127.0.0.1:8080
	CheckoutURL   string // checkout listener (hosted pages, browser API)
	DashboardURL  string // dashboard listener
	OperatorToken string
	DatabaseURL   string // set only when the harness started the server
	LogPath       string // server log, when the harness started it
	bin           string // the binary, when the harness built it (Sibling)
	stop          func()
	kill          func()
}

// CanLaunchSiblings reports whether the harness built this target, so that Sibling can start
// more servers on its database.
func (t *Target) CanLaunchSiblings() bool { return t.bin != "" && t.DatabaseURL != "" }

// Sibling starts one more `kassa serve` of the same binary on the same database, with its own
// listeners and the extra settings of opt (e.g. a low rate limit, or a second process sharing
// background work). Its operator token is its own; merchants and keys are shared through the
// database. The caller stops it. Only for targets the harness started (CanLaunchSiblings).
func (t *Target) Sibling(ctx context.Context, name string, opt Options) (*Target, error) {
	if !t.CanLaunchSiblings() {
		return nil, fmt.Errorf("harness: an external target cannot launch siblings")
	}
	logPath := filepath.Join(ModuleRoot(), "out", "conformance-server-"+safeName(name)+".log")
	s, err := Launch(ctx, t.bin, t.DatabaseURL, logPath, opt.smallPool())
	if err != nil {
		return nil, err
	}
	s.bin = t.bin
	return s, nil
}

// Binary is the path of the kassa binary the harness built ("" for an external target), for
// cases that run its other commands (kassa listen).
func (t *Target) Binary() string { return t.bin }

// Lone starts one more `kassa serve` of the same binary on a fresh, migrated database of its
// own (a copy of the test process's template: the caller's TestMain runs through pgtest.Main), for
// cases whose background work (webhook deliveries, sweeps) must not be shared with the suite's
// server, e.g. to see what survives the death of the only process. Stop or Kill end the
// process; drop removes the database and is called once every server started on it (with
// Sibling of the returned target) has ended. Only for targets the harness started.
func (t *Target) Lone(ctx context.Context, name string, opt Options) (s *Target, drop func(), err error) {
	if !t.CanLaunchSiblings() {
		return nil, nil, fmt.Errorf("harness: an external target cannot launch servers")
	}
	dbURL, drop, err := pgtest.CreateMigratedDatabase(ctx, pgtest.AdminURL())
	if err != nil {
		return nil, nil, err
	}
	logPath := filepath.Join(ModuleRoot(), "out", "conformance-server-"+safeName(name)+".log")
	if s, err = Launch(ctx, t.bin, dbURL, logPath, opt.smallPool()); err != nil {
		drop()
		return nil, nil, err
	}
	s.bin = t.bin
	return s, drop, nil
}

// LoneVia is Lone with the server's database URL passed through via (e.g. to reach the
// database through a proxy the case can cut): via gets the fresh database's URL and returns
// the one the server is started with.
func (t *Target) LoneVia(ctx context.Context, name string, opt Options, via func(dbURL string) (string, error)) (s *Target, drop func(), err error) {
	if !t.CanLaunchSiblings() {
		return nil, nil, fmt.Errorf("harness: an external target cannot launch servers")
	}
	dbURL, drop, err := pgtest.CreateMigratedDatabase(ctx, pgtest.AdminURL())
	if err != nil {
		return nil, nil, err
	}
	served, err := via(dbURL)
	if err != nil {
		drop()
		return nil, nil, err
	}
	logPath := filepath.Join(ModuleRoot(), "out", "conformance-server-"+safeName(name)+".log")
	if s, err = Launch(ctx, t.bin, served, logPath, opt.smallPool()); err != nil {
		drop()
		return nil, nil, err
	}
	s.bin = t.bin
	return s, drop, nil
}

// Stop ends the server the harness started (a no-op for an external target).
func (t *Target) Stop() {
	if t.stop != nil {
		t.stop()
	}
}

// Kill ends the server the harness started with SIGKILL, as a crash or an OOM kill would: no
// graceful shutdown, requests and webhook deliveries in flight are cut off. It returns once
// the process is gone. It ends the process only (StartLocal's database stays until Stop); a
// no-op for an external target.
func (t *Target) Kill() {
	if t.kill != nil {
		t.kill()
	}
}

// Options tune a server the harness starts.
type Options struct {
	Env map[string]string // extra KASSA_* settings
}

// extraServerConns is the database pool of a server a case starts beside the suite's
// (Sibling, Lone, LoneVia) unless the case sets KASSA_DB_MAX_CONNS: several such servers run
// at once with the suite's own and the other packages' test databases, on a PostgreSQL whose
// max_connections is often the default 100.
const extraServerConns = "10"

// smallPool is opt with KASSA_DB_MAX_CONNS set to extraServerConns when opt does not set it.
func (opt Options) smallPool() Options {
	if _, ok := opt.Env["KASSA_DB_MAX_CONNS"]; ok {
		return opt
	}
	env := map[string]string{"KASSA_DB_MAX_CONNS": extraServerConns}
	for k, v := range opt.Env {
		env[k] = v
	}
	return Options{Env: env}
}

// Start returns the external target when KASSA_BASE_URL is set (KASSA_CHECKOUT_URL and
// KASSA_DASHBOARD_URL name its other origins), else builds and starts one.
func Start(ctx context.Context, opt Options) (*Target, error) {
	if base := os.Getenv("KASSA_BASE_URL"); base != "" {
		return &Target{
			BaseURL:       strings.TrimRight(base, "/"),
			CheckoutURL:   strings.TrimRight(os.Getenv("KASSA_CHECKOUT_URL"), "/"),
			DashboardURL:  strings.TrimRight(os.Getenv("KASSA_DASHBOARD_URL"), "/"),
			OperatorToken: os.Getenv("KASSA_OPERATOR_TOKEN"),
		}, nil
	}
	return StartLocal(ctx, opt)
}

// ModuleRoot is the repository root (where go.mod is).
func ModuleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Build compiles cmd/kassa into dir (with -race when the caller runs with -race).
func Build(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "kassa")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "./cmd/kassa")
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = ModuleRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build kassa: %w\n%s", err, out)
	}
	return bin, nil
}

// StartLocal builds kassa, creates a fresh database and starts `kassa serve --migrate` on free
// loopback ports, waiting until /readyz answers.
func StartLocal(ctx context.Context, opt Options) (*Target, error) {
	dir, err := os.MkdirTemp("", "kassa-conformance-")
	if err != nil {
		return nil, err
	}
	bin, err := Build(ctx, dir)
	if err != nil {
		return nil, err
	}
	dbURL, drop, err := pgtest.CreateDatabase(ctx, pgtest.AdminURL())
	if err != nil {
		return nil, err
	}
	// The server log is kept in out/ (git-ignored) so it can be read after a failing run.
	logDir := filepath.Join(ModuleRoot(), "out")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}
	t, err := Launch(ctx, bin, dbURL, filepath.Join(logDir, "conformance-server.log"), opt)
	if err != nil {
		drop()
		return nil, err
	}
	inner := t.stop
	t.bin = bin
	t.stop = func() { inner(); drop(); os.RemoveAll(dir) }
	return t, nil
}

// SuiteSecretKey is the webhook secret-sealing key (KASSA_WEBHOOK_SECRET_KEY) of every server
// the harness starts, so that servers sharing a database open each other's secrets. Like a
// production server they start with a key; a case may give another one (opt.Env).
var SuiteSecretKey = func() string {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return base64.StdEncoding.EncodeToString(k)
}()

// Launch starts bin against dbURL and waits for readiness. The server runs with the
// development flag for webhook destinations (KASSA_WEBHOOK_ALLOW_PRIVATE): the suite's webhook
// receivers listen on loopback. A case that checks the address rule sets it to false.
//
// Its ports are picked free and released before the server binds them, so another process may
// take one in between (an outgoing connection's ephemeral port): a server that exits because
// an address is in use is started again on new ports, up to three times.
func Launch(ctx context.Context, bin, dbURL, logPath string, opt Options) (*Target, error) {
	for attempt := 1; ; attempt++ {
		t, err := launchOnce(bin, dbURL, logPath, opt)
		if !errors.Is(err, errPortTaken) || attempt == 3 {
			return t, err
		}
	}
}

// errPortTaken: the server exited early because one of its addresses was in use.
var errPortTaken = errors.New("an address of the server was in use")

func launchOnce(bin, dbURL, logPath string, opt Options) (*Target, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	token := "op_" + core.NewSecretPart()
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve", "--migrate")
	cmd.Env = append(os.Environ(),
		"KASSA_DATABASE_URL="+dbURL,
		"KASSA_OPERATOR_TOKEN="+token,
		"KASSA_API_ADDR="+ports[0],
		"KASSA_CHECKOUT_ADDR="+ports[1],
		"KASSA_DASHBOARD_ADDR="+ports[2],
		"KASSA_LOG_FORMAT=json",
		"KASSA_DEMO=false",
		"KASSA_DEV=false",
		"KASSA_WEBHOOK_ALLOW_PRIVATE=true",
		"KASSA_WEBHOOK_SECRET_KEY="+SuiteSecretKey,
	)
	for k, v := range opt.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t := &Target{
		BaseURL: "http://" + ports[0], CheckoutURL: "http://" + ports[1], DashboardURL: "http://" + ports[2],
		OperatorToken: token, DatabaseURL: dbURL, LogPath: logPath,
	}
	t.stop = func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		logf.Close()
	}
	t.kill = func() {
		_ = cmd.Process.Kill() // SIGKILL on Unix
		<-exited
		logf.Close()
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			log := tail(logPath)
			if strings.Contains(log, "address already in use") {
				return nil, fmt.Errorf("kassa serve exited early: %w; log:\n%s", errPortTaken, log)
			}
			return nil, fmt.Errorf("kassa serve exited early; log:\n%s", log)
		default:
		}
		if resp, err := http.Get(t.BaseURL + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return t, nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.stop()
	return nil, fmt.Errorf("kassa serve not ready within 60 s; log:\n%s", tail(logPath))
}

func freePorts(n int) ([]string, error) {
	var out []string
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().String())
	}
	return out, nil
}

// tail returns the last lines of a log file.
func tail(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > 40 {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}
