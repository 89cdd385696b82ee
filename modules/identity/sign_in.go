package identity

import (
	"context"
	"strings"
	"sync"

	"github.com/kassa-pay/kassa/core"
)

// ErrCredentialsInvalid is the one answer to a wrong password and to an unknown e-mail, so
// that sign-in does not tell which e-mail addresses have an account.
var ErrCredentialsInvalid = core.NewError(core.TypeAuthentication, "credentials_invalid", "",
	"The e-mail address or the password is wrong.")

// maxUsersPerEmail bounds the password checks of one sign-in: users written before owner
// e-mails became unique (CreateMerchant's ErrOwnerEmailTaken) may share an e-mail across
// merchants, each with its own password.
const maxUsersPerEmail = 5

// SignInResult is a new session: Token goes into the cookie and is never stored.
type SignInResult struct {
	Token   string
	Session *DashboardSession
}

// SignIn checks the e-mail and password of a dashboard user and opens a session. Failures are
// recorded per e-mail and client address for throttling (ThrottlePolicy); a throttled attempt
// gets 429 login_throttled before any password is checked. A wrong password and an unknown e-mail both
// cost one password hash and both answer ErrCredentialsInvalid. When the e-mail belongs to
// users of several merchants, the oldest user whose password matches signs in.
func (d *Dashboard) SignIn(ctx context.Context, email, password, clientIP string) (*SignInResult, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	if email == "" {
		return nil, core.MissingField("email")
	}
	if password == "" {
		return nil, core.MissingField("password")
	}
	if err := d.checkThrottle(ctx, email, clientIP); err != nil {
		return nil, err
	}
	users, err := d.store.UsersByEmail(ctx, email, maxUsersPerEmail)
	if err != nil {
		return nil, err
	}
	var user *User
	for _, u := range users {
		ok, err := u.PasswordMatches(password)
		if err != nil {
			return nil, err
		}
		if ok {
			user = u
			break
		}
	}
	if len(users) == 0 {
		// Spend what a real check costs, so timing does not reveal unknown addresses.
		_, _ = VerifyPassword(dummyHash(), password)
	}
	now := d.clock.Now()
	if user == nil {
		if err := d.store.RecordLoginFailure(ctx, email, clientIP, now); err != nil {
			return nil, err
		}
		return nil, ErrCredentialsInvalid
	}
	_ = d.store.ClearLoginFailures(ctx, email, clientIP)
	token := core.RandomBase62(43) // ≈ 256 bits
	rec := SessionRecord{
		TokenHash: HashSecret(token), UserID: user.ID(), MerchantID: user.MerchantID(),
		CSRFToken: core.RandomBase62(43), Created: now, LastSeen: now, ExpiresAt: now.Add(SessionMaxAge),
	}
	if err := d.store.CreateSession(ctx, &rec); err != nil {
		return nil, err
	}
	s, err := d.store.SessionByHash(ctx, rec.TokenHash)
	if err != nil {
		return nil, err
	}
	return &SignInResult{Token: token, Session: s}, nil
}

var (
	dummyOnce sync.Once
	dummy     string
)

// dummyHash is a hash of a random password with the default cost, made once.
func dummyHash() string {
	dummyOnce.Do(func() { dummy, _ = HashPassword(core.NewSecretPart()) })
	return dummy
}
