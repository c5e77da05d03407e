package models

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/logger"
)

// Defaults of SeedOptions.
const (
	DefaultSeedSubscribers = 100
	DefaultSeedTemplates   = 20
)

// SeedBase is the fixed clock of seeded data: messages spread over the year after it,
// subscribers and templates are created in the two years before.
var SeedBase = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// seedYear is the span of seeded messages' createdAt.
const seedYear = 365 * 24 * time.Hour

// SeedOptions say what Seed generates. Zero Subscribers and Templates take the defaults
// (zero Messages is none); an empty EnvironmentID is derived from Seed, an empty
// OrganizationID from the environment.
type SeedOptions struct {
	Seed                          int64
	EnvironmentID, OrganizationID string
	Messages, Subscribers         int
	Templates                     int
	// Progress, when set, is called after each batch with the messages written so far.
	Progress func(done int)
}

// SeedStats says where Seed wrote and how many records it generated.
type SeedStats struct {
	EnvironmentID, OrganizationID    string
	Messages, Subscribers, Templates int
}

// Seed fills an environment with synthetic, realistic data for demos and benchmarks. The
// rows depend only on the options and on how many messages the environment already has:
// the same options into two fresh databases give identical rows.
//
// Ids are ObjectId-shaped: four bytes of the record's creation second, then 64 bits from a
// PCG stream keyed by (seed, environment) for subscribers and templates, so seeding again
// reuses them (inserted only if missing), and by (seed, environment, messages already in
// the environment) for messages, so seeding again adds new messages whose ids do not
// collide with earlier runs, other seeds or other environments.
func (s *Store) Seed(ctx context.Context, o SeedOptions) (SeedStats, error) {
	if o.Messages < 0 || o.Subscribers < 0 || o.Templates < 0 {
		return SeedStats{}, Errorf(EINVALID, "seed counts must not be negative")
	}
	o.Subscribers = cmp.Or(o.Subscribers, DefaultSeedSubscribers)
	o.Templates = cmp.Or(o.Templates, DefaultSeedTemplates)
	if o.EnvironmentID == "" {
		o.EnvironmentID = seedID(SeedBase, seedRand(o.Seed, "", 1))
	}
	if o.OrganizationID == "" {
		o.OrganizationID = seedID(SeedBase, seedRand(o.Seed, o.EnvironmentID, 2))
	}
	env, err := s.EnsureEnvironment(ctx, o.EnvironmentID, o.OrganizationID, "Seeded data")
	if err != nil {
		return SeedStats{}, err
	}
	stats := SeedStats{EnvironmentID: env.ID, OrganizationID: env.OrganizationID, Subscribers: o.Subscribers, Templates: o.Templates}
	db := s.bulk().WithContext(ctx)

	subs := seedSubscribers(seedRand(o.Seed, env.ID, 3), env, o.Seed, o.Subscribers)
	if err := db.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(subs, s.insertBatch(transferBatch)).Error; err != nil {
		return stats, err
	}
	if err := s.resolveSubscriberIDs(ctx, env.ID, subs); err != nil {
		return stats, err
	}
	tpls := seedTemplates(seedRand(o.Seed, env.ID, 4), env, o.Templates)
	rows := make([]*Template, len(tpls))
	for i, t := range tpls {
		rows[i] = t.Template
	}
	if err := db.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(rows, s.insertBatch(transferBatch)).Error; err != nil {
		return stats, err
	}

	var existing int64
	if err := db.Model(&Message{}).Where("environment_id = ?", env.ID).Count(&existing).Error; err != nil {
		return stats, err
	}
	feeds := seedRand(o.Seed, env.ID, 6)
	gen := &messageGen{r: seedRand(o.Seed, env.ID, 7+uint64(existing)<<8), env: env, subs: subs, tpls: tpls,
		feeds: []string{seedID(SeedBase, feeds), seedID(SeedBase, feeds)}, total: o.Messages}
	stats.Messages, err = s.writeMessages(ctx, gen, o.Messages, o.Progress)
	return stats, err
}

// writeMessages inserts n generated messages in multi-row INSERTs, each its own commit.
// One goroutine generates batches; on MySQL two writers take turns, so one converts and
// sends a batch while the server stores the other's.
func (s *Store) writeMessages(ctx context.Context, gen *messageGen, n int, progress func(int)) (int, error) {
	batch, writers := s.insertBatch(1000), 1 // 32 columns: 32,000 placeholders, under MySQL's 65,535
	if s.dialect == DialectMySQL {
		writers = 2
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	db := s.bulk().WithContext(ctx)

	batches := make(chan []*Message, writers)
	go func() {
		defer close(batches)
		for done := 0; done < n; {
			b := make([]*Message, min(batch, n-done))
			for i := range b {
				b[i] = gen.next()
			}
			done += len(b)
			select {
			case batches <- b:
			case <-ctx.Done():
				return
			}
		}
	}()

	written, failed := make(chan int), make(chan error, writers)
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				if err := db.Create(b).Error; err != nil {
					failed <- err
					cancel()
					return
				}
				written <- len(b)
			}
		}()
	}
	go func() { wg.Wait(); close(written) }()
	done := 0
	for k := range written {
		done += k
		if progress != nil {
			progress(done)
		}
	}
	select {
	case err := <-failed:
		return done, err
	default:
		return done, nil
	}
}

// bulk is the store's handle with logging off: a slow multi-row INSERT would otherwise
// log its thousands of placeholders; errors are returned to the caller anyway.
func (s *Store) bulk() *gorm.DB {
	return s.db.Session(&gorm.Session{Logger: logger.Discard})
}

// resolveSubscriberIDs points the generated subscribers at the rows the environment holds
// for their subscriberIds, in case one existed before (the insert then did nothing).
func (s *Store) resolveSubscriberIDs(ctx context.Context, environmentID string, subs []*Subscriber) error {
	byExt := make(map[string]*Subscriber, len(subs))
	for _, sub := range subs {
		byExt[sub.SubscriberID] = sub
	}
	for start := 0; start < len(subs); start += transferBatch {
		ext := make([]string, 0, transferBatch)
		for _, sub := range subs[start:min(start+transferBatch, len(subs))] {
			ext = append(ext, sub.SubscriberID)
		}
		var rows []struct{ ID, SubscriberID string }
		if err := s.db.WithContext(ctx).Model(&Subscriber{}).Select("id, subscriber_id").
			Where("environment_id = ? AND subscriber_id IN ?", environmentID, ext).Find(&rows).Error; err != nil {
			return err
		}
		for _, r := range rows {
			byExt[r.SubscriberID].ID = r.ID
		}
	}
	return nil
}

// seedRand returns the PCG stream of one kind of record of one seed and environment.
func seedRand(seed int64, environmentID string, stream uint64) *rand.Rand {
	h := fnv.New64a()
	_, _ = h.Write([]byte(environmentID))
	return rand.New(rand.NewPCG(uint64(seed), h.Sum64()^stream*0x9e3779b97f4a7c15))
}

// seedID returns an ObjectId-shaped id: the second of t, then 64 bits from r.
func seedID(t time.Time, r *rand.Rand) string {
	var b [12]byte
	binary.BigEndian.PutUint32(b[:4], uint32(t.Unix()))
	binary.BigEndian.PutUint64(b[4:], r.Uint64())
	return hex.EncodeToString(b[:])
}

// oneOf returns a random element of list.
func oneOf[T any](r *rand.Rand, list []T) T { return list[r.IntN(len(list))] }

// randomAfter returns a time up to d after t, at millisecond precision.
func randomAfter(r *rand.Rand, t time.Time, d time.Duration) time.Time {
	return t.Add(time.Duration(r.Int64N(int64(d/time.Millisecond)+1)) * time.Millisecond)
}

var (
	seedFirstNames = []string{"Ada", "Alan", "Grace", "Linus", "Margaret", "Dennis", "Barbara", "Ken", "Zoë", "José",
		"Łukasz", "Søren", "Chloé", "Mateo", "Aiko", "Priya", "Olu", "Fatima", "Noah", "Emma", "Liam", "Mia", "Yuki", "Björn"}
	seedLastNames = []string{"Lovelace", "Turing", "Hopper", "Torvalds", "Hamilton", "Ritchie", "Liskov", "Thompson",
		"Müller", "García", "Kowalski", "Nielsen", "Dubois", "Rossi", "Tanaka", "Sharma", "Adeyemi", "Haddad", "Smith", "Johansson"}
	seedLocales = []struct{ locale, timezone, phone string }{{"en-US", "America/New_York", "+1555"}, {"en-US", "America/Los_Angeles", "+1555"},
		{"en-GB", "Europe/London", "+44770"}, {"fr-FR", "Europe/Paris", "+33612"}, {"de-DE", "Europe/Berlin", "+49151"},
		{"es-ES", "Europe/Madrid", "+34612"}, {"pt-BR", "America/Sao_Paulo", "+55119"}, {"ja-JP", "Asia/Tokyo", "+81901"},
		{"hi-IN", "Asia/Kolkata", "+91981"}, {"pl-PL", "Europe/Warsaw", "+48601"}}
	seedASCII   = strings.NewReplacer("ë", "e", "é", "e", "Ł", "L", "ø", "o", "ü", "u", "í", "i", "ö", "o")
	seedDomains = []string{"example.com", "example.org", "mail.example.net"}
	seedPlans   = []string{"free", "starter", "pro", "enterprise"}
	seedTopics  = []string{"product-updates", "billing", "security", "weekly-digest", "team"}
	// seedWorkflows are the templates; {first} and {n} fill in per message.
	seedWorkflows = []struct{ name, tag, subject, body, button string }{
		{"Welcome", "onboarding", "Welcome aboard, {first}!", "Hi {first}, your workspace is ready. Invite your team to get started.", "Invite team"},
		{"Password reset", "security", "Reset your password", "{first}, use the link below to choose a new password. It expires in 30 minutes.", "Reset password"},
		{"Order confirmation", "commerce", "Order #{n} is confirmed", "Thanks {first}! We received order #{n} and will let you know when it ships.", "View order"},
		{"Shipping update", "commerce", "Order #{n} has shipped", "Good news {first}: order #{n} is on its way and should arrive in 2-3 days.", "Track parcel"},
		{"Invoice available", "billing", "Your invoice INV-{n} is ready", "Hi {first}, invoice INV-{n} is available in your billing settings.", "Download invoice"},
		{"Comment mention", "collaboration", "{first}, you were mentioned", "Someone mentioned you in a comment on task #{n}: \"Can you take a look?\"", "Reply"},
		{"Weekly digest", "digest", "Your week in review", "{first}, here is what happened in your projects this week: {n} updates.", "Open digest"},
		{"Security alert", "security", "New sign-in to your account", "{first}, we noticed a sign-in from a new device. Was this you?", "Review activity"},
		{"Payment failed", "billing", "Payment for invoice INV-{n} failed", "{first}, we could not charge your card for invoice INV-{n}. Please update your payment method.", "Update card"},
		{"Trial ending", "billing", "Your trial ends in 3 days", "Hi {first}, your trial ends soon. Choose a plan to keep your data and workflows.", "Choose plan"},
		{"New follower", "social", "You have a new follower", "{first}, you have {n} new followers this week.", "See followers"},
		{"Team invitation", "collaboration", "You are invited to join a team", "{first}, you have been invited to collaborate on project #{n}.", "Accept invitation"},
		{"Report ready", "analytics", "Your report is ready", "{first}, the export you requested (report #{n}) is ready to download.", "Download report"},
		{"Subscription renewed", "billing", "Subscription renewed", "Thanks {first}, your subscription has been renewed until next year.", "View receipt"},
		{"Delivery delayed", "commerce", "Order #{n} is delayed", "Sorry {first}, order #{n} is delayed by the carrier. New estimate: 2 days.", "Track parcel"},
		{"Appointment reminder", "reminders", "Reminder: appointment tomorrow", "{first}, this is a reminder of your appointment #{n} tomorrow at 10:00.", "Reschedule"},
		{"Price drop", "marketing", "A price dropped on your wishlist", "{first}, an item on your wishlist is now {n}% off.", "Shop now"},
		{"Review request", "marketing", "How was order #{n}?", "{first}, tell us what you think of your recent order #{n}.", "Write review"},
		{"Account verified", "onboarding", "Your account is verified", "{first}, your email address is verified. You are all set.", "Go to dashboard"},
		{"Feature announcement", "product", "New: scheduled reports", "{first}, you can now schedule reports to be delivered every week.", "Try it"},
	}
	seedProviders = map[ChannelType][]string{ChannelInApp: {"novu"}, ChannelEmail: {"sendgrid", "ses", "postmark"},
		ChannelSMS: {"twilio", "sns", "vonage"}, ChannelChat: {"slack", "discord", "msteams"}, ChannelPush: {"fcm", "apns", "expo"}}
	seedProducts = []string{"Wireless headphones", "Standing desk", "Coffee grinder", "Running shoes", "Backpack", "Desk lamp"}
)

// seedSubscribers generates n subscribers; the j-th has subscriberId user-<seed>-<j>.
func seedSubscribers(r *rand.Rand, env *Environment, seed int64, n int) []*Subscriber {
	subs := make([]*Subscriber, n)
	integration := seedID(SeedBase, r)
	for j := range subs {
		first, last, loc := oneOf(r, seedFirstNames), oneOf(r, seedLastNames), oneOf(r, seedLocales)
		created := randomAfter(r, SeedBase.Add(seedYear*time.Duration(j)/time.Duration(n)-50*24*time.Hour), 30*24*time.Hour)
		if j < n/20 {
			created = randomAfter(r, SeedBase.AddDate(-2, 0, 0), 700*24*time.Hour)
		}
		ext := fmt.Sprintf("user-%s-%05d", strconv.FormatUint(uint64(seed), 36), j)
		online := r.IntN(3) == 0
		sub := &Subscriber{
			ID: seedID(created, r), FirstName: first, LastName: last,
			Email:  strings.ToLower(seedASCII.Replace(first+"."+last)) + strconv.Itoa(j) + "@" + oneOf(r, seedDomains),
			Phone:  fmt.Sprintf("%s%07d", loc.phone, r.IntN(10_000_000)),
			Avatar: "https://avatars.example.com/" + ext + ".png", Locale: loc.locale, Timezone: loc.timezone,
			IsOnline: &online, LastOnlineAt: TimePtr(randomAfter(r, SeedBase, 365*24*time.Hour)), Version: r.IntN(4),
			Data:         JSON(fmt.Sprintf(`{"plan":%q,"signupSource":%q,"seats":%d}`, oneOf(r, seedPlans), oneOf(r, []string{"web", "ios", "android", "invite"}), 1+r.IntN(50))),
			SubscriberID: ext, OrganizationID: env.OrganizationID, EnvironmentID: env.ID,
			CreatedAt: NewTime(created), UpdatedAt: NewTime(randomAfter(r, created, 30*24*time.Hour)),
		}
		if r.IntN(3) == 0 {
			sub.Channels = append(sub.Channels, SubscriberChannel{ProviderID: "slack", IntegrationIdentifier: "slack-workspace", IntegrationID: integration,
				Credentials: &ChannelCredentials{WebhookURL: fmt.Sprintf("https://hooks.example.com/services/T%06d/B%08x", r.IntN(1e6), r.Uint32())}})
		}
		if r.IntN(2) == 0 {
			sub.Channels = append(sub.Channels, SubscriberChannel{ProviderID: "fcm", IntegrationIdentifier: "firebase-prod",
				Credentials: &ChannelCredentials{DeviceTokens: []string{fmt.Sprintf("fcm:%016x%016x", r.Uint64(), r.Uint64())}}})
		}
		if r.IntN(2) == 0 {
			sub.Topics = []string{oneOf(r, seedTopics)}
		}
		subs[j] = sub
	}
	return subs
}

// seedTemplate is a generated workflow and what its messages need to know of it.
type seedTemplate struct {
	*Template
	workflow int
	channels []ChannelType
	steps    []string // message template id of each channel's step
}

// seedTemplates generates n workflows; the first delivers through every channel, the others
// through in-app and a few more.
func seedTemplates(r *rand.Rand, env *Environment, n int) []*seedTemplate {
	creator, group := seedID(SeedBase, r), seedID(SeedBase, r)
	yes, no := true, false
	out := make([]*seedTemplate, n)
	for k := range out {
		wf := seedWorkflows[k%len(seedWorkflows)]
		name := wf.name
		if k >= len(seedWorkflows) {
			name = fmt.Sprintf("%s %d", name, k/len(seedWorkflows)+1)
		}
		identifier := strings.ReplaceAll(strings.ToLower(name), " ", "-")
		created := randomAfter(r, SeedBase.AddDate(-1, 0, 0), 300*24*time.Hour)
		t := &seedTemplate{workflow: k % len(seedWorkflows), channels: []ChannelType{ChannelInApp}}
		for _, c := range Channels[1:] {
			if k == 0 || r.IntN(2) == 0 {
				t.channels = append(t.channels, c)
			}
		}
		prefs := &PreferenceSettings{InApp: true}
		id := seedID(created, r)
		var steps []Step
		for _, c := range t.channels {
			step := Step{ID: seedID(created, r), UUID: fmt.Sprintf("%016x%016x", r.Uint64(), r.Uint64()), Name: string(c),
				TemplateID: seedID(created, r), Active: &yes, ShouldStopOnFail: &no,
				Template: JSON(fmt.Sprintf(`{"type":%q,"subject":%q,"content":%q}`, c, wf.subject, wf.body))}
			switch c {
			case ChannelEmail:
				prefs.Email = true
			case ChannelSMS:
				prefs.SMS = true
				step.Filters = []StepFilter{{IsNegated: &no, Type: "BOOLEAN", Value: "AND",
					Children: []FilterChild{{Field: "plan", Value: "free", Operator: "NOT_EQUAL", On: "subscriber"}}}}
			case ChannelChat:
				prefs.Chat = true
			case ChannelPush:
				prefs.Push = true
			}
			t.steps = append(t.steps, step.TemplateID)
			steps = append(steps, step)
		}
		t.Template = &Template{ID: id, Name: name, Description: wf.subject, Active: true, Draft: k%7 == 6,
			PreferenceSettings: prefs, Critical: wf.tag == "security", Tags: []string{wf.tag}, Steps: steps,
			OrganizationID: env.OrganizationID, CreatorID: creator, EnvironmentID: env.ID,
			Triggers: []Trigger{{Type: "event", Identifier: identifier,
				Variables:           []TriggerVariable{{Name: "firstName"}, {Name: "orderId"}},
				SubscriberVariables: []TriggerVariable{{Name: "subscriberId"}, {Name: "email"}}}},
			NotificationGroupID: group,
			NotificationGroup:   &NotificationGroup{ID: group, Name: "General", EnvironmentID: env.ID, OrganizationID: env.OrganizationID},
			Data:                JSON(`{"owner":"growth-team"}`),
		}
		out[k] = t
	}
	return out
}

// messageGen generates messages in createdAt order, in transactions of 1 to 4 messages
// of one workflow and one subscriber over different channels.
type messageGen struct {
	r     *rand.Rand
	env   *Environment
	subs  []*Subscriber
	tpls  []*seedTemplate
	feeds []string
	total int
	i     int
	// the transaction being generated
	txn, notification string
	left              int
	at                time.Time
	sub               *Subscriber
	tpl               *seedTemplate
	order             []int
}

func (g *messageGen) next() *Message {
	r := g.r
	if g.left == 0 {
		g.at = randomAfter(r, SeedBase.Add(seedYear/time.Duration(g.total)*time.Duration(g.i)), time.Minute)
		// Subscribers sign up through the year and get messages for about five weeks
		// after; a twentieth of them, the regulars, get a quarter of all messages. Besides
		// being plausible, this keeps the subscriber indexes' insert points few at any
		// moment, which is what lets a million messages load fast on a small buffer pool.
		n, w := len(g.subs), max(1, len(g.subs)/20)
		j := g.i*n/g.total + r.IntN(2*w+1) - w
		if j < 0 { // mirror back into range, keeping the spread even at the ends
			j = -j
		}
		if j >= n {
			j = 2*(n-1) - j
		}
		if r.IntN(4) == 0 {
			j = r.IntN(w)
		}
		g.sub = g.subs[min(max(j, 0), n-1)]
		g.tpl = g.tpls[r.IntN(len(g.tpls))]
		g.order = r.Perm(len(g.tpl.channels))
		g.left = min(1+r.IntN(4), len(g.order))
		// A time-ordered (version 7) UUID: the transaction index then grows at its end
		// instead of taking random inserts, which keeps a million-message seed fast.
		ms := uint64(g.at.UnixMilli())
		g.txn = fmt.Sprintf("%08x-%04x-7%03x-%04x-%012x", ms>>16, ms&0xffff, r.Uint32()&0xfff, r.Uint32()&0x3fff|0x8000, r.Uint64()&0xffffffffffff)
		g.notification = seedID(g.at, r)
	}
	g.left--
	g.i++
	step := g.order[g.left]
	channel, wf, sub := g.tpl.channels[step], seedWorkflows[g.tpl.workflow], g.sub
	created := randomAfter(r, g.at, 3*time.Second)
	n := strconv.Itoa(10_000 + r.IntN(90_000))
	fill := strings.NewReplacer("{first}", sub.FirstName, "{n}", n)
	url := fmt.Sprintf("https://app.example.com/%s/%s", g.tpl.Triggers[0].Identifier, n)
	m := &Message{
		ID: seedID(created, r), TemplateID: g.tpl.ID, EnvironmentID: g.env.ID, MessageTemplateID: g.tpl.steps[step],
		OrganizationID: g.env.OrganizationID, NotificationID: g.notification, SubscriberID: sub.ID,
		TemplateIdentifier: g.tpl.Triggers[0].Identifier, CreatedAt: NewTime(created),
		DeliveredAt:   []Time{NewTime(randomAfter(r, created, 2*time.Second))},
		Content:       []ContentBlock{{Type: "text", Content: fill.Replace(wf.body)}},
		TransactionID: g.txn, Channel: channel, Status: "sent", ProviderID: oneOf(r, seedProviders[channel]),
		Payload: JSON(fmt.Sprintf(`{"workflow":%q,"reference":%q,"amount":%d.%02d,"currency":%q,"items":[{"sku":"SKU-%04d","name":%q,"quantity":%d}],"customer":{"firstName":%q,"locale":%q,"plan":%q},"url":%q}`,
			g.tpl.Triggers[0].Identifier, n, 5+r.IntN(500), r.IntN(100), oneOf(r, []string{"EUR", "USD", "GBP", "JPY"}), r.IntN(10_000),
			oneOf(r, seedProducts), 1+r.IntN(3), sub.FirstName, sub.Locale, oneOf(r, seedPlans), url)),
	}
	switch channel {
	case ChannelInApp:
		m.Subject = fill.Replace(wf.subject)
		m.CTA = CTA{Type: "redirect", Data: &CTAData{URL: url}, Action: &CTAAction{Status: ActionPending, Buttons: []CTAButton{
			{Type: ButtonPrimary, Content: wf.button, ResultContent: "Done"}, {Type: ButtonSecondary, Content: "Dismiss", ResultContent: "Dismissed"}}}}
		if r.IntN(2) == 0 {
			m.FeedID = g.feeds[r.IntN(len(g.feeds))]
		}
		if r.IntN(10) < 7 {
			m.Seen, m.LastSeenDate = true, TimePtr(randomAfter(r, created, 72*time.Hour))
			if r.IntN(10) < 6 {
				m.Read, m.LastReadDate = true, TimePtr(randomAfter(r, m.LastSeenDate.Time, 24*time.Hour))
			}
		}
	case ChannelEmail:
		m.Subject, m.Email = fill.Replace(wf.subject), sub.Email
		m.Content = append(m.Content, ContentBlock{Type: "button", Content: wf.button, URL: url, Styles: &ContentStyles{TextAlign: "center"}})
	case ChannelSMS:
		m.Phone = sub.Phone
	case ChannelChat:
		m.DirectWebhookURL = "https://hooks.example.com/services/" + g.env.ID
		for _, c := range sub.Channels {
			if c.Credentials != nil && c.Credentials.WebhookURL != "" {
				m.DirectWebhookURL = c.Credentials.WebhookURL
			}
		}
	case ChannelPush:
		m.Title = fill.Replace(wf.subject)
		m.DeviceTokens = []string{fmt.Sprintf("fcm:%016x", r.Uint64())}
		for _, c := range sub.Channels {
			if c.Credentials != nil && len(c.Credentials.DeviceTokens) > 0 {
				m.DeviceTokens = c.Credentials.DeviceTokens
			}
		}
	}
	return m
}
