package invoicing

import (
	"errors"
	"testing"
	"time"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/payments"
)

var (
	testScope = core.Scope{MerchantID: "mer_1", Env: core.EnvTest}
	t0        = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
)

func draft(unit int64) *Invoice {
	return NewDraft(testScope, Draft{Currency: "EUR", CustomerName: "Ada", CustomerEmail: "ada@example.com",
		Lines: []Line{{Description: "Work", Quantity: 1, UnitAmount: unit, VATRate: 1900}}, DaysUntilDue: 14}, t0)
}

func open(t *testing.T) *Invoice {
	t.Helper()
	inv := draft(1000)
	if err := inv.Finalize("ACME", 1, "tok", t0); err != nil {
		t.Fatal(err)
	}
	return inv
}

func TestFinalizeNumbersDatesAndMinimum(t *testing.T) {
	inv := draft(1000)
	if err := inv.Finalize("ACME", 42, "tok", t0); err != nil {
		t.Fatal(err)
	}
	if inv.Status() != StatusOpen || *inv.Number() != "ACME-INV-2026-0042" || *inv.PublicToken() != "tok" {
		t.Fatalf("sent: %s %v %v", inv.Status(), *inv.Number(), *inv.PublicToken())
	}
	if !inv.IssueDate().Equal(t0) || !inv.DueDate().Equal(t0.AddDate(0, 0, 14)) {
		t.Fatalf("dates: %v %v", inv.IssueDate(), inv.DueDate())
	}
	if inv.AmountDue() != 1190 {
		t.Fatalf("amount due %d, want 1190", inv.AmountDue())
	}
	// 210 + 19% = 249.9 → 250? 210 × 0.19 = 39.9 → 40: total 250, the minimum, is sendable.
	if err := draft(210).CheckSendable(); err != nil {
		t.Fatalf("total of exactly 250: %v", err)
	}
	// 209 + 39.71 → 40 = 249: below the minimum.
	err := draft(209).Finalize("ACME", 1, "tok", t0)
	var de *core.Error
	if !errors.As(err, &de) || de.Type != core.TypeAmountTooSmall || de.Code != "amount_below_minimum" || de.Param != "total_amount" {
		t.Fatalf("249: %v", err)
	}
}

// Every move of the state table, and every refused one with the state it names.
func TestTransitions(t *testing.T) {
	t.Run("draft can be edited and deleted, not voided or marked", func(t *testing.T) {
		inv := draft(1000)
		if err := inv.Edit(inv.Content(), t0); err != nil {
			t.Fatal(err)
		}
		if err := inv.CheckDeletable(); err != nil {
			t.Fatal(err)
		}
		if err := inv.Void(t0); !errors.Is(err, ErrNotOpen) {
			t.Fatalf("void draft: %v", err)
		}
		if err := inv.MarkUncollectible(t0); !errors.Is(err, ErrNotOpen) {
			t.Fatalf("mark draft: %v", err)
		}
	})
	t.Run("open is neither edited, deleted nor sent again", func(t *testing.T) {
		inv := open(t)
		if err := inv.Edit(inv.Content(), t0); !errors.Is(err, ErrNotDraft) {
			t.Fatal(err)
		}
		if err := inv.CheckDeletable(); !errors.Is(err, ErrNotDraft) {
			t.Fatal(err)
		}
		if err := inv.CheckSendable(); !errors.Is(err, ErrNotDraft) {
			t.Fatal(err)
		}
	})
	t.Run("open → void", func(t *testing.T) {
		inv := open(t)
		if err := inv.Void(t0); err != nil || inv.Status() != StatusVoid || inv.AmountDue() != 0 {
			t.Fatalf("%v %s", err, inv.Status())
		}
		if err := inv.Void(t0); !errors.Is(err, ErrNotOpen) {
			t.Fatalf("void twice: %v", err)
		}
		if _, err := inv.startCharge(payments.AttemptCharge, "", t0); !errors.Is(err, ErrNotOpen) {
			t.Fatalf("pay void: %v", err)
		}
	})
	t.Run("open → uncollectible → paid or void", func(t *testing.T) {
		inv := open(t)
		if err := inv.MarkUncollectible(t0); err != nil || inv.Status() != StatusUncollectible {
			t.Fatal(err)
		}
		if err := inv.MarkUncollectible(t0); !errors.Is(err, ErrNotOpen) {
			t.Fatalf("mark twice: %v", err)
		}
		if n, err := inv.startCharge(payments.AttemptCharge, "", t0); err != nil || n != 1 {
			t.Fatalf("pay uncollectible: %d %v", n, err)
		}
		if err := inv.Void(t0); !errors.Is(err, ErrPaymentInProgress) {
			t.Fatalf("void while charging: %v", err)
		}
		if err := inv.stopCharge(payments.AttemptKey(inv.ID(), 1)); err != nil {
			t.Fatal(err)
		}
		if err := inv.Void(t0); err != nil {
			t.Fatalf("void uncollectible: %v", err)
		}
	})
	t.Run("one charge in flight at a time, attempts numbered", func(t *testing.T) {
		inv := open(t)
		if n, _ := inv.startCharge(payments.AttemptCharge, "", t0); n != 1 {
			t.Fatal(n)
		}
		if _, err := inv.startCharge(payments.AttemptCharge, "", t0); !errors.Is(err, payments.ErrChargeInProgress) {
			t.Fatalf("second: %v", err)
		}
		if err := inv.stopCharge("other:1"); err == nil {
			t.Fatal("stopping another attempt must fail")
		}
		_ = inv.stopCharge(payments.AttemptKey(inv.ID(), 1))
		if n, _ := inv.startCharge(payments.AttemptCharge, "", t0); n != 2 || inv.AttemptCount() != 2 {
			t.Fatal(n)
		}
	})
}

// The amount due takes the customer's balance: total + starting − ending; a covered invoice is
// paid with nothing paid and no payment.
func TestAmountDueTakesTheBalance(t *testing.T) {
	inv := open(t) // 1000 + 19 % VAT = 1190
	inv.startingBalance, inv.endingBalance = -857, -107
	if inv.AmountDue() != 440 || inv.Amount() != 440 {
		t.Fatalf("amount due %d, want 1190 − 750 = 440", inv.AmountDue())
	}
	inv.startingBalance, inv.endingBalance = -1500, -310
	if inv.AmountDue() != 0 {
		t.Fatalf("covered: amount due %d", inv.AmountDue())
	}
	inv.paidByBalance(t0)
	if inv.Status() != StatusPaid || inv.AmountPaid() != 0 || inv.PaymentID() != nil || inv.AmountDue() != 0 {
		t.Fatalf("paid by the balance: %s paid %d payment %v", inv.Status(), inv.AmountPaid(), inv.PaymentID())
	}
	back := Rehydrate(inv.Snapshot())
	if back.StartingBalance() != -1500 || back.EndingBalance() != -310 {
		t.Fatalf("snapshot lost the balance: %d %d", back.StartingBalance(), back.EndingBalance())
	}
}
