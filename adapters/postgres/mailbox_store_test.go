package postgres_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/adapters/postgres"
	"github.com/kassa-pay/kassa/adapters/postgres/pgtest"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/ports"
)

// scopeClocks answers the same instant for every scope.
type scopeClocks struct{ t time.Time }

func (c scopeClocks) Now(context.Context, core.Scope) (time.Time, error) { return c.t, nil }

var mailboxNow = time.Date(2026, time.March, 15, 12, 0, 0, 0, time.UTC)

func newMailbox(t *testing.T) (*postgres.MailboxStore, core.Scope, func() core.Scope) {
	t.Helper()
	db := pgtest.New(t)
	mb, err := postgres.NewMailboxStore(db, scopeClocks{mailboxNow}, "Kassa <receipts@kassa.example>")
	if err != nil {
		t.Fatal(err)
	}
	return mb, pgtest.Merchant(t, db), func() core.Scope { return pgtest.Merchant(t, db) }
}

func mailMsg(scope core.Scope, n int) ports.Message {
	return ports.Message{
		Scope: scope, To: "buyer" + strconv.Itoa(n) + "@example.com", Subject: "Receipt " + strconv.Itoa(n),
		Text: "text " + strconv.Itoa(n), HTML: "<p>html " + strconv.Itoa(n) + "</p>",
	}
}

func TestMailboxRoundTrip(t *testing.T) {
	t.Parallel()
	mb, scope, _ := newMailbox(t)
	ctx := context.Background()

	m := mailMsg(scope, 1)
	m.Headers = map[string]string{"X-Kassa-Payment": "py_1"}
	if err := mb.Send(ctx, m); err != nil {
		t.Fatal(err)
	}
	own := mailMsg(scope, 2)
	own.From = "Shop <shop@merchant.example>"
	own.HTML = ""
	if err := mb.Send(ctx, own); err != nil {
		t.Fatal(err)
	}

	page, err := mb.ListMailbox(ctx, scope, core.ListQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 2 || page.HasMore {
		t.Fatalf("page = %d items, has_more %v", len(page.Items), page.HasMore)
	}
	second, first := page.Items[0], page.Items[1] // newest first
	if !core.HasIDShape(first.ID, postgres.MailboxIDPrefix) {
		t.Errorf("id %q is not msg_ + 24 base62", first.ID)
	}
	if first.Scope != scope || first.To != "buyer1@example.com" || first.Subject != "Receipt 1" ||
		first.Text != "text 1" || first.HTML != "<p>html 1</p>" || first.From != "Kassa <receipts@kassa.example>" ||
		first.Headers["X-Kassa-Payment"] != "py_1" || !first.Created.Equal(mailboxNow) {
		t.Errorf("first = %+v", first)
	}
	if second.From != "Shop <shop@merchant.example>" || second.HTML != "" || second.Headers != nil {
		t.Errorf("second = %+v", second)
	}

	got, err := mb.GetMailboxMessage(ctx, scope, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != first.ID || got.Text != first.Text || !got.Created.Equal(first.Created) {
		t.Errorf("get = %+v, want %+v", got, first)
	}
}

func TestMailboxRefusesInvalidMessages(t *testing.T) {
	t.Parallel()
	mb, scope, _ := newMailbox(t)
	ctx := context.Background()
	for name, mutate := range map[string]func(m *ports.Message){
		"bad recipient":    func(m *ports.Message) { m.To = "nobody" },
		"no subject":       func(m *ports.Message) { m.Subject = "" },
		"subject newline":  func(m *ports.Message) { m.Subject = "a\r\nBcc: x@example.com" },
		"no text":          func(m *ports.Message) { m.Text = "" },
		"no scope":         func(m *ports.Message) { m.Scope = core.Scope{} },
		"reserved header":  func(m *ports.Message) { m.Headers = map[string]string{"Bcc": "x@example.com"} },
		"header injection": func(m *ports.Message) { m.Headers = map[string]string{"X-A": "1\r\nBcc: x@example.com"} },
	} {
		m := mailMsg(scope, 1)
		mutate(&m)
		if err := mb.Send(ctx, m); !ports.IsPermanent(err) {
			t.Errorf("%s: err = %v, want permanent", name, err)
		}
	}
	page, err := mb.ListMailbox(ctx, scope, core.ListQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 0 {
		t.Errorf("%d invalid messages stored", len(page.Items))
	}
}

func TestMailboxScopeIsolation(t *testing.T) {
	t.Parallel()
	mb, a, newMerchant := newMailbox(t)
	ctx := context.Background()
	b := newMerchant()
	aLive := core.Scope{MerchantID: a.MerchantID, Env: core.EnvLive}
	for i, sc := range []core.Scope{a, b, aLive} {
		if err := mb.Send(ctx, mailMsg(sc, i)); err != nil {
			t.Fatal(err)
		}
	}
	ids := map[core.Scope]string{}
	for _, sc := range []core.Scope{a, b, aLive} {
		page, err := mb.ListMailbox(ctx, sc, core.ListQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) != 1 || page.Items[0].Scope != sc {
			t.Fatalf("scope %+v sees %+v", sc, page.Items)
		}
		ids[sc] = page.Items[0].ID
	}
	// Another scope's id is neither readable nor a cursor.
	if _, err := mb.GetMailboxMessage(ctx, a, ids[b]); !errors.Is(err, core.NotFound("mailbox_message", "id", "")) {
		t.Errorf("get of another merchant's message: %v", err)
	}
	if _, err := mb.GetMailboxMessage(ctx, a, ids[aLive]); !errors.Is(err, core.NotFound("mailbox_message", "id", "")) {
		t.Errorf("get of the live environment's message from test: %v", err)
	}
	_, err := mb.ListMailbox(ctx, a, core.ListQuery{StartingAfter: ids[b]})
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Code != "starting_after_invalid" {
		t.Errorf("cursor from another merchant: %v", err)
	}
	_, err = mb.ListMailbox(ctx, a, core.ListQuery{EndingBefore: ids[aLive]})
	if !errors.As(err, &ce) || ce.Code != "ending_before_invalid" {
		t.Errorf("cursor from the live environment: %v", err)
	}
}

func TestMailboxPaging(t *testing.T) {
	t.Parallel()
	mb, scope, _ := newMailbox(t)
	ctx := context.Background()
	const n = 5
	for i := range n {
		if err := mb.Send(ctx, mailMsg(scope, i)); err != nil {
			t.Fatal(err)
		}
	}
	// Forward, two at a time: 4 3 | 2 1 | 0.
	var subjects []string
	var ids []string
	q := core.ListQuery{Limit: 2}
	for pages := 0; ; pages++ {
		if pages > n {
			t.Fatal("paging does not end")
		}
		page, err := mb.ListMailbox(ctx, scope, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range page.Items {
			subjects = append(subjects, m.Subject)
			ids = append(ids, m.ID)
		}
		if !page.HasMore {
			break
		}
		q.StartingAfter = page.Items[len(page.Items)-1].ID
	}
	want := []string{"Receipt 4", "Receipt 3", "Receipt 2", "Receipt 1", "Receipt 0"}
	if len(subjects) != n {
		t.Fatalf("subjects = %v, want %v", subjects, want)
	}
	for i := range want {
		if subjects[i] != want[i] {
			t.Fatalf("subjects = %v, want %v", subjects, want)
		}
	}
	// Backward from the oldest: the two just newer than it, newest first, and more before them.
	page, err := mb.ListMailbox(ctx, scope, core.ListQuery{Limit: 2, EndingBefore: ids[4]})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 2 || page.Items[0].ID != ids[2] || page.Items[1].ID != ids[3] || !page.HasMore {
		t.Errorf("ending_before page = %v (has_more %v), want [%s %s] with more", page.Items, page.HasMore, ids[2], ids[3])
	}
	// Bounds of the query are checked.
	if _, err := mb.ListMailbox(ctx, scope, core.ListQuery{Limit: 101}); err == nil {
		t.Error("limit 101 accepted")
	}
	if _, err := mb.ListMailbox(ctx, scope, core.ListQuery{StartingAfter: "msg_unknown"}); err == nil {
		t.Error("unknown cursor accepted")
	}
}

func TestNewMailboxStoreChecksArguments(t *testing.T) {
	t.Parallel()
	if _, err := postgres.NewMailboxStore(nil, nil, "a@b.example"); err == nil {
		t.Error("nil clocks accepted")
	}
	if _, err := postgres.NewMailboxStore(nil, scopeClocks{}, "not an address"); err == nil {
		t.Error("bad sender accepted")
	}
}

// The development mailbox stands in for a mail server: inside a unit of work it keeps
// nothing, and every message answers ports.ErrInsideTransaction.
func TestMailboxRefusesToSendInsideATransaction(t *testing.T) {
	t.Parallel()
	mb, scope, _ := newMailbox(t)
	ctx := ports.WithinTransaction(context.Background())
	if err := mb.Send(ctx, mailMsg(scope, 1)); !errors.Is(err, ports.ErrInsideTransaction) {
		t.Fatalf("Send: %v", err)
	}
	for _, err := range mb.SendBatch(ctx, []ports.Message{mailMsg(scope, 2), mailMsg(scope, 3)}) {
		if !errors.Is(err, ports.ErrInsideTransaction) {
			t.Fatalf("SendBatch: %v", err)
		}
	}
	if got, err := mb.ListMailbox(context.Background(), scope, core.ListQuery{Limit: 10}); err != nil || len(got.Items) != 0 {
		t.Fatalf("%d messages kept", len(got.Items))
	}
}
