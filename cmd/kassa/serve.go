package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"time"

	"github.com/kassa-pay/kassa/adapters/email"
	httpapi "github.com/kassa-pay/kassa/adapters/http"
	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/ratelimit"
	"github.com/kassa-pay/kassa/adapters/web/invoicepdf"
	"github.com/kassa-pay/kassa/adapters/webhookhttp"
	render "github.com/kassa-pay/kassa/adapters/wire"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/billing"
	"github.com/kassa-pay/kassa/modules/identity"
	"github.com/kassa-pay/kassa/modules/invoicing"
	"github.com/kassa-pay/kassa/modules/mail"
	"github.com/kassa-pay/kassa/modules/payments"
	"github.com/kassa-pay/kassa/modules/scheduler"
	"github.com/kassa-pay/kassa/modules/webhooks"
	"github.com/kassa-pay/kassa/ports"
)

// idempotencyHolds is the most keyed requests of the phased shape (test clock advances) that
// run at once; one more waits for a connection of the lock pool.
const idempotencyHolds = 8

func serve(ctx context.Context, args []string) error {
	var cfg config
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	if err := cfg.parse(fs, args); err != nil {
		return err
	}
	log := newLogger(cfg.LogFormat)
	slog.SetDefault(log)

	db, err := postgres.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	if n := cfg.DBMaxConns; n > 0 {
		db.SetMaxOpenConns(n)
		db.SetMaxIdleConns(n)
	}
	if cfg.Migrate {
		applied, err := postgres.MigrateUp(ctx, db)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		log.Info("migrations applied", "count", len(applied))
	} else if err := postgres.CheckCurrent(ctx, db); err != nil {
		return err
	}

	var autovacuum string
	if err := db.GetContext(ctx, &autovacuum, "SHOW autovacuum"); err == nil && autovacuum != "on" {
		log.Warn("PostgreSQL runs with autovacuum off: tables get no planner statistics, and lookups by id may scan a merchant's whole list index; enable autovacuum or ANALYZE regularly")
	}

	fees, rates, refresher, err := feeCalculator(ctx, cfg, log)
	if err != nil {
		return err
	}
	// The process's presence: an advisory lock on a connection of its own, by which other
	// processes see at once that a test clock advance this one ran has lost its process.
	presence, err := postgres.NewPresence(ctx, cfg.DatabaseURL, log)
	if err != nil {
		return err
	}
	defer func() { _ = presence.Close() }()
	a := wire(db, cfg.CheckoutURL, fees, clockWiring{Owner: presence.ID(), Wait: cfg.ClockWait, Log: log})
	a.payments.UseRates(rates) // the dispute fee of payments whose fee kept no rate
	// The keys of requests of the phased shape are held on connections of a pool of their own
	// (postgres.IdempotencyStore.Hold), so that they never take the main pool from the phases.
	locks, err := postgres.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer func() { _ = locks.Close() }()
	locks.SetMaxOpenConns(idempotencyHolds)
	locks.SetMaxIdleConns(2)
	a.idem = postgres.NewIdempotencyStore(db, locks)
	listenCtx, stopListening := context.WithCancel(context.Background())
	defer stopListening()
	hooks, err := webhookStore(ctx, log, a, cfg)
	if err != nil {
		return fmt.Errorf("webhooks: %w", err)
	}
	a.webhooks, err = webhooks.NewService(hooks, core.SystemClock{}, webhooks.Destinations{AllowPrivate: cfg.WebhookLAN})
	if err != nil {
		return err
	}
	appHooks, err := webhooks.NewAppService(hooks, core.SystemClock{}, webhooks.Destinations{AllowPrivate: cfg.WebhookLAN})
	if err != nil {
		return err
	}
	a.appHooks = appHooks
	if cfg.WebhookLAN {
		log.Warn("webhook endpoints may point at loopback, private and link-local addresses (development flag): never run a server open to merchants like this")
	}
	a.dashboard = dashboardUseCases(db, cfg)
	deliveries, err := webhookWorker(listenCtx, log, hooks, cfg)
	if err != nil {
		return err
	}
	mails, err := mailWorker(log, a, cfg)
	if err != nil {
		return fmt.Errorf("e-mail: %w", err)
	}
	th, err := newThrottles(cfg, log)
	if err != nil {
		return err
	}
	api, err := httpapi.NewAPIHandler(httpapi.APIDeps{
		Log:      log,
		Identity: a.identity,
		Catalog:  a.catalog,
		Billing:  a.billing,
		Checkout: a.checkout,
		Events:   a.events,
		Clock:    a.testclock,
		Limiter:  ratelimit.New(cfg.RateLive, cfg.RateTest),
		Idem:     a.idem,
		UoW:      a.keyedUoW(),
		// A keyed transaction holds one connection and its stores' reads may need another:
		// leave one free.
		Transactions: max(1, db.Stats().MaxOpenConnections-1),
		OperatorCheck: func(h string) bool {
			return identity.OperatorTokenValid(h, cfg.OperatorToken)
		},
		Ready: func(ctx context.Context) error {
			if err := db.PingContext(ctx); err != nil {
				return err
			}
			return postgres.CheckCurrent(ctx, db)
		},
		AuthThrottle: th.apiAuth,
		BaseURL:      cfg.APIURL,
		Apps:         a.apps,
		AppHooks:     appHooks,
		AppReader:    a.appReader,
		AppLive:      ratelimit.NewKeyed(cfg.RateLive, int(math.Ceil(cfg.RateLive))),
		AppTest:      ratelimit.NewKeyed(cfg.RateTest, int(math.Ceil(cfg.RateTest))),
		AppURL:       cfg.AppURL,
	})
	if err != nil {
		return err
	}

	checkoutHandler, err := checkoutOrigin(log, a, checkoutPages(log, a), th.checkout, cfg.CheckoutURL)
	if err != nil {
		return err
	}
	dashboard, err := dashboardOrigin(log, a, cfg, rates, th)
	if err != nil {
		return err
	}
	servers := []*http.Server{
		newServer(cfg.APIAddr, api),
		newServer(cfg.CheckoutAddr, checkoutHandler),
		newServer(cfg.DashboardAddr, dashboard),
	}
	listeners := make([]net.Listener, len(servers))
	for i, s := range servers {
		if listeners[i], err = net.Listen("tcp", s.Addr); err != nil {
			for _, l := range listeners[:i] {
				_ = l.Close() // the Listen error is the one to report
			}
			return err
		}
	}
	log.Info("kassa listening", "api", cfg.APIURL, "app", cfg.AppURL, "checkout", cfg.CheckoutURL, "dashboard", cfg.DashboardURL)
	if cfg.Demo {
		if err := demo(ctx, a, cfg); err != nil {
			return fmt.Errorf("demo merchant: %w", err)
		}
	}

	if cfg.PprofAddr != "" {
		servers = append(servers, pprofServer(cfg.PprofAddr))
		l, err := net.Listen("tcp", cfg.PprofAddr)
		if err != nil {
			for _, l := range listeners {
				_ = l.Close() // the Listen error is the one to report
			}
			return fmt.Errorf("pprof listener: %w", err)
		}
		listeners = append(listeners, l)
		log.Info("pprof listening", "addr", cfg.PprofAddr)
	}

	var wg sync.WaitGroup
	errc := make(chan error, len(servers))
	for i, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Serve(listeners[i]); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- err
			}
		}()
	}
	sweepCtx, stopSweeps := context.WithCancel(context.Background())
	wg.Add(1)
	go func() { defer wg.Done(); backgroundScheduler(log, a, cfg.SweepInterval).Run(sweepCtx) }()
	wg.Add(1)
	go func() { defer wg.Done(); _ = deliveries.Run(sweepCtx) }()
	wg.Add(1)
	go func() { defer wg.Done(); _ = mails.Run(sweepCtx) }()
	if refresher != nil {
		wg.Add(1)
		go func() { defer wg.Done(); refresher.Run(sweepCtx) }()
	}

	select {
	case <-ctx.Done():
		log.Info("shutting down: no new connections, finishing in-flight requests")
	case err = <-errc:
		log.Error("listener failed; shutting down", "error", err.Error())
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, s := range servers {
		_ = s.Shutdown(shutdownCtx)
	}
	// Test clock advances still running stop at their next batch and are recorded as given
	// up: the next process (or the next advance to the same time) resumes them.
	if err := a.testclock.Shutdown(shutdownCtx); err != nil {
		log.Warn("test clock advances did not stop in time", "error", err.Error())
	}
	stopSweeps()
	wg.Wait()
	log.Info("stopped")
	return err
}

func newServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
}

// pprofServer serves net/http/pprof on a listener of its own (KASSA_PPROF_ADDR), never on the
// API listener. It has no write timeout, so a long CPU profile can finish.
func pprofServer(addr string) *http.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
}

// backgroundScheduler is the background loop over the registered due-work processors (see wire) plus
// the resumption of test clock advances left unfinished (every round) and the hourly purges of
// idempotency records and ended dashboard sessions.
func backgroundScheduler(log *slog.Logger, a *app, every time.Duration) *scheduler.Loop {
	return &scheduler.Loop{Registry: a.due, Interval: every, Log: log, Periodic: []scheduler.Periodic{
		// Test clock advances whose process died, stopped or gave them up: taken over and run
		// to their end here, every round.
		{Name: "test clock advances left unfinished", Run: a.testclock.ResumePending},
		{Name: "idempotency purge", Every: time.Hour, Run: func(ctx context.Context, now time.Time) (int64, error) {
			return a.idem.Purge(ctx, now, 24*time.Hour)
		}},
		{Name: "dashboard sessions purge", Every: time.Hour, Run: func(ctx context.Context, _ time.Time) (int64, error) {
			return a.dashboard.Purge(ctx)
		}},
	}}
}

// webhookWorker wires the webhook delivery worker over store: woken by LISTEN/NOTIFY (polling
// when LISTEN fails), sending through the outbound adapter that refuses every address that is
// not public, in test and live mode, unless KASSA_WEBHOOK_ALLOW_PRIVATE (or --dev) is set. Every process runs one; they share the
// work through SKIP LOCKED claims.
func webhookWorker(ctx context.Context, log *slog.Logger, store *postgres.WebhookStore, cfg config) (*webhooks.Worker, error) {
	wake, err := postgres.ListenWebhooks(ctx, cfg.DatabaseURL, log)
	if err != nil {
		log.Warn("webhooks: LISTEN failed; deliveries are found by polling only", "error", err.Error())
		wake = nil
	}
	return webhooks.NewWorker(store, webhookhttp.New(webhookhttp.Options{AllowPrivate: cfg.WebhookLAN}),
		render.RenderEvent, core.SystemClock{}, webhooks.WorkerOptions{Wake: wake, Log: log})
}

// mailWorker wires the mail sender: the mail queue, the composer of each kind of mail (the
// payments module's receipts, rendered with the e-mail adapter's templates), and the mailer
// chosen by newMailer. Every process runs one; they share the queue through SKIP LOCKED claims.
func mailWorker(log *slog.Logger, a *app, cfg config) (*mail.Worker, error) {
	mailer, err := newMailer(cfg, a.db, a.testclock, log)
	if err != nil {
		return nil, err
	}
	receipts, err := payments.NewReceiptComposer(postgres.NewReceiptSource(a.db), renderReceipt)
	if err != nil {
		return nil, err
	}
	refundMails, err := payments.NewRefundReceiptComposer(postgres.NewRefundStore(a.db), postgres.NewReceiptSource(a.db), renderRefund)
	if err != nil {
		return nil, err
	}
	sent, err := invoicing.NewSentComposer(a.invoices, func(m invoicing.SentMail) (ports.Message, error) {
		return email.InvoiceSentMessage(m.Scope, m.To, email.InvoiceSent{CustomerName: m.CustomerName,
			MerchantName: m.MerchantName, Number: m.Number, AmountDue: m.AmountDue, Currency: m.Currency,
			DueDate: m.DueDate, URL: m.URL, PDF: m.PDF})
	})
	if err != nil {
		return nil, err
	}
	sent.WithPDF(func(h *invoicing.Hosted) (string, []byte, error) {
		b, err := invoicepdf.Render(h)
		return invoicepdf.FileName(h.Invoice), b, err
	})
	return mail.NewWorker(postgres.NewMailOutboxStore(a.db),
		mail.Composers{payments.MailReceipt: receipts, payments.MailRefundReceipt: refundMails, invoicing.MailInvoiceSent: sent,
			billing.MailDunning: dunningComposer{a.invoices}, billing.MailTrialEnding: trialEndingComposer{a.billing, identityMerchants{a.identity}}},
		mailer, core.SystemClock{}, mail.WorkerOptions{Log: log}), nil
}

// renderRefund renders a refund receipt with the e-mail adapter's templates.
func renderRefund(r payments.RefundReceipt) (ports.Message, error) {
	return email.RefundMessage(r.Scope, r.To, email.RefundReceipt{MerchantName: r.MerchantName, Amount: r.Amount,
		Currency: r.Currency, PaymentAmount: r.PaymentAmount, Refunded: r.Refunded, Reference: r.Reference,
		RefundID: r.RefundID, Date: r.Date})
}

// renderReceipt renders a receipt with the e-mail adapter's templates.
func renderReceipt(r payments.Receipt) (ports.Message, error) {
	return email.ReceiptMessage(r.Scope, r.To, email.Receipt{
		MerchantName: r.MerchantName, Amount: r.Amount, Currency: r.Currency, Reference: r.Reference,
		PaymentID: r.PaymentID, CardBrand: r.CardBrand, CardLast4: r.CardLast4, IBANLast4: r.IBANLast4, Date: r.Date,
	})
}
