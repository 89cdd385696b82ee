package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kassa-pay/kassa/adapters/fx"
	"github.com/kassa-pay/kassa/adapters/http/kit"
)

// config is everything `kassa serve` reads. Each field has a flag and a KASSA_* environment
// variable (D1); a flag given on the command line wins over the environment.
type config struct {
	DatabaseURL   string
	DBMaxConns    int
	OperatorToken string
	APIAddr       string
	CheckoutAddr  string
	DashboardAddr string
	APIURL        string
	CheckoutURL   string
	DashboardURL  string
	AppURL        string
	LogFormat     string
	RateLive      float64
	RateTest      float64
	SweepInterval time.Duration
	ClockWait     time.Duration
	Migrate       bool
	Demo          bool
	DemoHookAddr  string
	WebhookKey    string
	WebhookLAN    bool
	Dev           bool
	PprofAddr     string
	// Dashboard sign-in throttling (identity.ThrottlePolicy).
	LoginPerPair   int
	LoginPerIP     int
	LoginBackoff   int
	LoginWindow    time.Duration
	TrustedProxies string
	ProxyHeader    string
	// Abuse throttles (docs/operations.md, "Abuse throttles").
	AuthFailuresPerMinute float64
	DashboardRate         float64
	DashboardRateAnon     float64
	CheckoutRate          float64
	CheckoutRatePerIP     float64
	FeePlans              string
	FXFile                string
	FXURL                 string
	FXRefresh             time.Duration
	SMTPURL               string
	SMTPTestMail          bool
	MailFrom              string
}

type setting struct {
	name, env, def, help string
	target               any
}

func (c *config) settings() []setting {
	return []setting{
		{"database-url", "KASSA_DATABASE_URL", "", "PostgreSQL URL (required)", &c.DatabaseURL},
		{"db-max-conns", "KASSA_DB_MAX_CONNS", "20", "largest number of open database connections", &c.DBMaxConns},
		{"operator-token", "KASSA_OPERATOR_TOKEN", "", "bearer token of the operator API; empty disables it", &c.OperatorToken},
		{"api-addr", "KASSA_API_ADDR", "127.0.0.1:8080", "listen address of the API (merchant, App, operator)", &c.APIAddr},
		{"checkout-addr", "KASSA_CHECKOUT_ADDR", "127.0.0.1:8081", "listen address of the hosted checkout origin", &c.CheckoutAddr},
		{"dashboard-addr", "KASSA_DASHBOARD_ADDR", "127.0.0.1:8082", "listen address of the dashboard origin", &c.DashboardAddr},
		{"api-url", "KASSA_API_URL", "", "public base URL of the API (default http://<api-addr>)", &c.APIURL},
		{"checkout-url", "KASSA_CHECKOUT_URL", "", "public base URL of hosted checkout (default http://<checkout-addr>)", &c.CheckoutURL},
		{"dashboard-url", "KASSA_DASHBOARD_URL", "", "public base URL of the dashboard (default http://<dashboard-addr>)", &c.DashboardURL},
		{"app-url", "KASSA_APP_URL", "", "public base URL of the App API (default <api-url>/app)", &c.AppURL},
		{"log-format", "KASSA_LOG_FORMAT", "json", "json or text", &c.LogFormat},
		{"rate-live", "KASSA_RATE_LIVE", "100", "live requests per second per merchant (burst equal)", &c.RateLive},
		{"rate-test", "KASSA_RATE_TEST", "25", "test requests per second per merchant (burst equal)", &c.RateTest},
		{"sweep-interval", "KASSA_SWEEP_INTERVAL", "5s", "how often background sweeps run (session expiry, SEPA settlement, disputes, idempotency purge)", &c.SweepInterval},
		{"test-clock-wait", "KASSA_TEST_CLOCK_WAIT", "15s", "how long a test clock advance request waits for its due work before it answers 202 with the clock still advancing (the work goes on in the background)", &c.ClockWait},
		{"migrate", "KASSA_MIGRATE", "false", "apply pending migrations before serving", &c.Migrate},
		{"webhook-secret-key", "KASSA_WEBHOOK_SECRET_KEY", "", "32-byte key (base64 or hex; kassa webhook-key generate) that seals webhook signing secrets at rest; a comma-separated list rotates (the first seals, all open); required unless --dev", &c.WebhookKey},
		{"webhook-allow-private", "KASSA_WEBHOOK_ALLOW_PRIVATE", "false", "let webhook endpoints (test and live) point at loopback, private, link-local and metadata addresses (development only; --dev and --demo set it)", &c.WebhookLAN},
		{"dev", "KASSA_DEV", "false", "development mode (--demo sets it): --webhook-allow-private, and without --webhook-secret-key a local key generated once and kept in a file", &c.Dev},
		{"demo", "KASSA_DEMO", "false", "create a demo merchant on first start; every start prints a new test key, a webhook secret and the steps of a payment", &c.Demo},
		{"demo-webhook-addr", "KASSA_DEMO_WEBHOOK_ADDR", "127.0.0.1:4000", "with --demo: address of the local receiver (kassa listen --addr) the demo merchant's test webhook endpoint points at", &c.DemoHookAddr},
		{"fee-plans", "KASSA_FEE_PLANS", "", "JSON file of fee plans (format of testdata/fees/default.json); empty = the built-in defaults", &c.FeePlans},
		{"fx-file", "KASSA_FX_FILE", "", "ECB reference-rate XML file (daily, 90-day or history format) loaded at start; empty = the bundled sample (test fixture figures)", &c.FXFile},
		{"fx-url", "KASSA_FX_URL", "", "URL of ECB reference rates to refresh from (e.g. " + fx.DefaultECBURL + "); empty = no refresh", &c.FXURL},
		{"fx-refresh", "KASSA_FX_REFRESH", "6h", "how often rates are refreshed from --fx-url", &c.FXRefresh},
		{"smtp-url", "KASSA_SMTP_URL", "", "SMTP server for e-mail (receipts): smtp://user:pass@host:587 (STARTTLS) or smtps://user:pass@host:465 (TLS); empty keeps e-mail in the development mailbox", &c.SMTPURL},
		{"smtp-test-mail", "KASSA_SMTP_TEST_MAIL", "false", "also send test-mode e-mail through --smtp-url (to rehearse with a mail catcher); without it test-mode receipts stay in the development mailbox, so a test key cannot make Kassa mail any address it likes", &c.SMTPTestMail},
		{"mail-from", "KASSA_MAIL_FROM", defaultMailFrom, "sender of Kassa's e-mail", &c.MailFrom},
		{"login-failures-per-pair", "KASSA_LOGIN_FAILURES_PER_PAIR", "5", "failed dashboard sign-ins allowed per e-mail address from one client address within the login window", &c.LoginPerPair},
		{"login-failures-per-ip", "KASSA_LOGIN_FAILURES_PER_IP", "30", "failed dashboard sign-ins allowed per client address (any e-mail) within the login window", &c.LoginPerIP},
		{"login-email-backoff-after", "KASSA_LOGIN_EMAIL_BACKOFF_AFTER", "10", "failed sign-ins of one e-mail (all addresses) within the login window after which addresses that failed for it back off (1 s, doubling up to the window)", &c.LoginBackoff},
		{"login-window", "KASSA_LOGIN_WINDOW", "15m", "window of the dashboard sign-in throttle; beyond the limits, sign-in answers 429 until the oldest failure is this old", &c.LoginWindow},
		{"trusted-proxies", "KASSA_TRUSTED_PROXIES", "", "comma-separated addresses or CIDR prefixes of reverse proxies whose forwarding header is believed (the client address of the per-address limits); empty = the connection's peer", &c.TrustedProxies},
		{"trusted-proxy-header", "KASSA_TRUSTED_PROXY_HEADER", kit.HeaderXForwardedFor, "the header the trusted proxies write the client address into: X-Forwarded-For or Forwarded (RFC 7239); entries may carry a port (ip:port, [v6]:port)", &c.ProxyHeader},
		{"auth-failures-per-minute", "KASSA_AUTH_FAILURES_PER_MINUTE", "20", "failed authentications (401) allowed per client address on the API and dashboard listeners: a bucket of this many, refilled at this many a minute; beyond, 429 before credentials are checked (0 = unlimited)", &c.AuthFailuresPerMinute},
		{"dashboard-rate", "KASSA_DASHBOARD_RATE", "20", "dashboard API requests per second per session cookie (burst equal; 0 = unlimited)", &c.DashboardRate},
		{"dashboard-rate-anonymous", "KASSA_DASHBOARD_RATE_ANONYMOUS", "5", "dashboard API requests per second per client address without a session cookie, sign-in included (burst equal; 0 = unlimited)", &c.DashboardRateAnon},
		{"checkout-rate", "KASSA_CHECKOUT_RATE", "10", "checkout browser API requests per second per client secret and client address (burst equal; 0 = unlimited)", &c.CheckoutRate},
		{"checkout-rate-per-ip", "KASSA_CHECKOUT_RATE_PER_IP", "50", "checkout browser API requests per second per client address (burst equal; 0 = unlimited)", &c.CheckoutRatePerIP},
		{"pprof-addr", "KASSA_PPROF_ADDR", "", "listen address of net/http/pprof (profiling only; empty = off)", &c.PprofAddr},
	}
}

// parse reads flags, then fills every flag not given from its environment variable.
func (c *config) parse(fs *flag.FlagSet, args []string) error {
	ss := c.settings()
	for _, s := range ss {
		help := fmt.Sprintf("%s (env %s)", s.help, s.env)
		switch t := s.target.(type) {
		case *string:
			fs.StringVar(t, s.name, s.def, help)
		case *int:
			d, _ := strconv.Atoi(s.def)
			fs.IntVar(t, s.name, d, help)
		case *float64:
			d, _ := strconv.ParseFloat(s.def, 64)
			fs.Float64Var(t, s.name, d, help)
		case *time.Duration:
			d, _ := time.ParseDuration(s.def)
			fs.DurationVar(t, s.name, d, help)
		case *bool:
			fs.BoolVar(t, s.name, s.def == "true", help)
		}
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, s := range ss {
		v, ok := os.LookupEnv(s.env)
		if given[s.name] || !ok || v == "" {
			continue
		}
		if err := fs.Set(s.name, v); err != nil {
			return fmt.Errorf("%s: %w", s.env, err)
		}
	}
	// The demo is development: it delivers to a local receiver (kassa listen) on loopback.
	if c.Demo {
		c.Dev = true
	}
	if c.Dev {
		c.WebhookLAN = true
	}
	if c.DatabaseURL == "" {
		return fmt.Errorf("no database: set KASSA_DATABASE_URL or --database-url (make run finds one for you)")
	}
	// An advance request answers within the wait; it must stay well inside the API's 60 s write
	// timeout and the 20 s a transaction may stay idle.
	if c.ClockWait <= 0 || c.ClockWait > 20*time.Second {
		return fmt.Errorf("KASSA_TEST_CLOCK_WAIT (--test-clock-wait) must be above 0 and at most 20s, got %s", c.ClockWait)
	}
	c.APIURL = baseURL(c.APIURL, c.APIAddr)
	c.CheckoutURL = baseURL(c.CheckoutURL, c.CheckoutAddr)
	c.DashboardURL = baseURL(c.DashboardURL, c.DashboardAddr)
	c.AppURL = strings.TrimRight(c.AppURL, "/")
	if c.AppURL == "" {
		c.AppURL = c.APIURL + "/app"
	}
	return nil
}

func baseURL(explicit, addr string) string {
	if explicit != "" {
		return strings.TrimRight(explicit, "/")
	}
	if strings.HasPrefix(addr, ":") {
		addr = "127.0.0.1" + addr
	}
	return "http://" + addr
}
