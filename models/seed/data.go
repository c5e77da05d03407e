package seed

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"messages/models"
)

// stream returns the PCG stream of one kind of record of one seed and environment.
func stream(seed int64, environmentID string, kind uint64) *rand.Rand {
	h := fnv.New64a()
	_, _ = h.Write([]byte(environmentID))
	return rand.New(rand.NewPCG(uint64(seed), h.Sum64()^kind*0x9e3779b97f4a7c15))
}

// objectID returns an ObjectId-shaped id: the second of t, then 64 bits from r.
func objectID(t time.Time, r *rand.Rand) string {
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
	firstNames = []string{"Ada", "Alan", "Grace", "Linus", "Margaret", "Dennis", "Barbara", "Ken", "Zoë", "José",
		"Łukasz", "Søren", "Chloé", "Mateo", "Aiko", "Priya", "Olu", "Fatima", "Noah", "Emma", "Liam", "Mia", "Yuki", "Björn"}
	lastNames = []string{"Lovelace", "Turing", "Hopper", "Torvalds", "Hamilton", "Ritchie", "Liskov", "Thompson",
		"Müller", "García", "Kowalski", "Nielsen", "Dubois", "Rossi", "Tanaka", "Sharma", "Adeyemi", "Haddad", "Smith", "Johansson"}
	locales = []struct{ locale, timezone, phone string }{{"en-US", "America/New_York", "+1555"}, {"en-US", "America/Los_Angeles", "+1555"},
		{"en-GB", "Europe/London", "+44770"}, {"fr-FR", "Europe/Paris", "+33612"}, {"de-DE", "Europe/Berlin", "+49151"},
		{"es-ES", "Europe/Madrid", "+34612"}, {"pt-BR", "America/Sao_Paulo", "+55119"}, {"ja-JP", "Asia/Tokyo", "+81901"},
		{"hi-IN", "Asia/Kolkata", "+91981"}, {"pl-PL", "Europe/Warsaw", "+48601"}}
	asciiNames = strings.NewReplacer("ë", "e", "é", "e", "Ł", "L", "ø", "o", "ü", "u", "í", "i", "ö", "o")
	domains    = []string{"example.com", "example.org", "mail.example.net"}
	plans      = []string{"free", "starter", "pro", "enterprise"}
	topics     = []string{"product-updates", "billing", "security", "weekly-digest", "team"}
	// workflows are the templates; {first} and {n} fill in per message.
	workflows = []struct{ name, tag, subject, body, button string }{
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
	providers = map[models.ChannelType][]string{models.ChannelInApp: {"novu"}, models.ChannelEmail: {"sendgrid", "ses", "postmark"},
		models.ChannelSMS: {"twilio", "sns", "vonage"}, models.ChannelChat: {"slack", "discord", "msteams"}, models.ChannelPush: {"fcm", "apns", "expo"}}
	products = []string{"Wireless headphones", "Standing desk", "Coffee grinder", "Running shoes", "Backpack", "Desk lamp"}
)

// subscribers generates n subscribers; the j-th has subscriberId user-<seed>-<j>.
func subscribers(r *rand.Rand, env *models.Environment, seed int64, n int) []*models.Subscriber {
	subs := make([]*models.Subscriber, n)
	integration := objectID(Base, r)
	for j := range subs {
		first, last, loc := oneOf(r, firstNames), oneOf(r, lastNames), oneOf(r, locales)
		created := randomAfter(r, Base.Add(year*time.Duration(j)/time.Duration(n)-50*24*time.Hour), 30*24*time.Hour)
		if j < n/20 {
			created = randomAfter(r, Base.AddDate(-2, 0, 0), 700*24*time.Hour)
		}
		ext := fmt.Sprintf("user-%s-%05d", strconv.FormatUint(uint64(seed), 36), j)
		online := r.IntN(3) == 0
		sub := &models.Subscriber{
			ID: objectID(created, r), FirstName: first, LastName: last,
			Email:  strings.ToLower(asciiNames.Replace(first+"."+last)) + strconv.Itoa(j) + "@" + oneOf(r, domains),
			Phone:  fmt.Sprintf("%s%07d", loc.phone, r.IntN(10_000_000)),
			Avatar: "https://avatars.example.com/" + ext + ".png", Locale: loc.locale, Timezone: loc.timezone,
			IsOnline: &online, LastOnlineAt: models.TimePtr(randomAfter(r, Base, 365*24*time.Hour)), Version: r.IntN(4),
			Data:         models.JSON(fmt.Sprintf(`{"plan":%q,"signupSource":%q,"seats":%d}`, oneOf(r, plans), oneOf(r, []string{"web", "ios", "android", "invite"}), 1+r.IntN(50))),
			SubscriberID: ext, OrganizationID: env.OrganizationID, EnvironmentID: env.ID,
			CreatedAt: models.NewTime(created), UpdatedAt: models.NewTime(randomAfter(r, created, 30*24*time.Hour)),
		}
		if r.IntN(3) == 0 {
			sub.Channels = append(sub.Channels, models.SubscriberChannel{ProviderID: "slack", IntegrationIdentifier: "slack-workspace", IntegrationID: integration,
				Credentials: &models.ChannelCredentials{WebhookURL: fmt.Sprintf("https://hooks.example.com/services/T%06d/B%08x", r.IntN(1e6), r.Uint32())}})
		}
		if r.IntN(2) == 0 {
			sub.Channels = append(sub.Channels, models.SubscriberChannel{ProviderID: "fcm", IntegrationIdentifier: "firebase-prod",
				Credentials: &models.ChannelCredentials{DeviceTokens: []string{fmt.Sprintf("fcm:%016x%016x", r.Uint64(), r.Uint64())}}})
		}
		if r.IntN(2) == 0 {
			sub.Topics = []string{oneOf(r, topics)}
		}
		subs[j] = sub
	}
	return subs
}

// template is a generated workflow and what its messages need to know of it.
type template struct {
	*models.Template
	workflow int
	channels []models.ChannelType
	steps    []string // message template id of each channel's step
}

// templates generates n workflows; the first delivers through every channel, the others
// through in-app and a few more.
func templates(r *rand.Rand, env *models.Environment, n int) []*template {
	creator, group := objectID(Base, r), objectID(Base, r)
	yes, no := true, false
	out := make([]*template, n)
	for k := range out {
		wf := workflows[k%len(workflows)]
		name := wf.name
		if k >= len(workflows) {
			name = fmt.Sprintf("%s %d", name, k/len(workflows)+1)
		}
		identifier := strings.ReplaceAll(strings.ToLower(name), " ", "-")
		created := randomAfter(r, Base.AddDate(-1, 0, 0), 300*24*time.Hour)
		t := &template{workflow: k % len(workflows), channels: []models.ChannelType{models.ChannelInApp}}
		for _, c := range models.Channels[1:] {
			if k == 0 || r.IntN(2) == 0 {
				t.channels = append(t.channels, c)
			}
		}
		prefs := &models.PreferenceSettings{InApp: true}
		id := objectID(created, r)
		var steps []models.Step
		for _, c := range t.channels {
			step := models.Step{ID: objectID(created, r), UUID: fmt.Sprintf("%016x%016x", r.Uint64(), r.Uint64()), Name: string(c),
				TemplateID: objectID(created, r), Active: &yes, ShouldStopOnFail: &no,
				Template: models.JSON(fmt.Sprintf(`{"type":%q,"subject":%q,"content":%q}`, c, wf.subject, wf.body))}
			switch c {
			case models.ChannelEmail:
				prefs.Email = true
			case models.ChannelSMS:
				prefs.SMS = true
				step.Filters = []models.StepFilter{{IsNegated: &no, Type: "BOOLEAN", Value: "AND",
					Children: []models.FilterChild{{Field: "plan", Value: "free", Operator: "NOT_EQUAL", On: "subscriber"}}}}
			case models.ChannelChat:
				prefs.Chat = true
			case models.ChannelPush:
				prefs.Push = true
			}
			t.steps = append(t.steps, step.TemplateID)
			steps = append(steps, step)
		}
		t.Template = &models.Template{ID: id, Name: name, Description: wf.subject, Active: true, Draft: k%7 == 6,
			PreferenceSettings: prefs, Critical: wf.tag == "security", Tags: []string{wf.tag}, Steps: steps,
			OrganizationID: env.OrganizationID, CreatorID: creator, EnvironmentID: env.ID,
			Triggers: []models.Trigger{{Type: "event", Identifier: identifier,
				Variables:           []models.TriggerVariable{{Name: "firstName"}, {Name: "orderId"}},
				SubscriberVariables: []models.TriggerVariable{{Name: "subscriberId"}, {Name: "email"}}}},
			NotificationGroupID: group,
			NotificationGroup:   &models.NotificationGroup{ID: group, Name: "General", EnvironmentID: env.ID, OrganizationID: env.OrganizationID},
			Data:                models.JSON(`{"owner":"growth-team"}`),
		}
		out[k] = t
	}
	return out
}

// messageGen generates messages in createdAt order, in transactions of 1 to 4 messages
// of one workflow and one subscriber over different channels.
type messageGen struct {
	r     *rand.Rand
	env   *models.Environment
	subs  []*models.Subscriber
	tpls  []*template
	feeds []string
	total int
	i     int
	// the transaction being generated
	txn, notification string
	left              int
	at                time.Time
	sub               *models.Subscriber
	tpl               *template
	order             []int
}

func (g *messageGen) next() *models.Message {
	r := g.r
	if g.left == 0 {
		g.at = randomAfter(r, Base.Add(year/time.Duration(g.total)*time.Duration(g.i)), time.Minute)
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
		g.notification = objectID(g.at, r)
	}
	g.left--
	g.i++
	step := g.order[g.left]
	channel, wf, sub := g.tpl.channels[step], workflows[g.tpl.workflow], g.sub
	created := randomAfter(r, g.at, 3*time.Second)
	n := strconv.Itoa(10_000 + r.IntN(90_000))
	fill := strings.NewReplacer("{first}", sub.FirstName, "{n}", n)
	url := fmt.Sprintf("https://app.example.com/%s/%s", g.tpl.Triggers[0].Identifier, n)
	m := &models.Message{
		ID: objectID(created, r), TemplateID: g.tpl.ID, EnvironmentID: g.env.ID, MessageTemplateID: g.tpl.steps[step],
		OrganizationID: g.env.OrganizationID, NotificationID: g.notification, SubscriberID: sub.ID,
		TemplateIdentifier: g.tpl.Triggers[0].Identifier, CreatedAt: models.NewTime(created),
		DeliveredAt:   []models.Time{models.NewTime(randomAfter(r, created, 2*time.Second))},
		Content:       []models.ContentBlock{{Type: "text", Content: fill.Replace(wf.body)}},
		TransactionID: g.txn, Channel: channel, Status: "sent", ProviderID: oneOf(r, providers[channel]),
		Payload: models.JSON(fmt.Sprintf(`{"workflow":%q,"reference":%q,"amount":%d.%02d,"currency":%q,"items":[{"sku":"SKU-%04d","name":%q,"quantity":%d}],"customer":{"firstName":%q,"locale":%q,"plan":%q},"url":%q}`,
			g.tpl.Triggers[0].Identifier, n, 5+r.IntN(500), r.IntN(100), oneOf(r, []string{"EUR", "USD", "GBP", "JPY"}), r.IntN(10_000),
			oneOf(r, products), 1+r.IntN(3), sub.FirstName, sub.Locale, oneOf(r, plans), url)),
	}
	switch channel {
	case models.ChannelInApp:
		m.Subject = fill.Replace(wf.subject)
		m.CTA = models.CTA{Type: "redirect", Data: &models.CTAData{URL: url}, Action: &models.CTAAction{Status: models.ActionPending, Buttons: []models.CTAButton{
			{Type: models.ButtonPrimary, Content: wf.button, ResultContent: "Done"}, {Type: models.ButtonSecondary, Content: "Dismiss", ResultContent: "Dismissed"}}}}
		if r.IntN(2) == 0 {
			m.FeedID = g.feeds[r.IntN(len(g.feeds))]
		}
		if r.IntN(10) < 7 {
			m.Seen, m.LastSeenDate = true, models.TimePtr(randomAfter(r, created, 72*time.Hour))
			if r.IntN(10) < 6 {
				m.Read, m.LastReadDate = true, models.TimePtr(randomAfter(r, m.LastSeenDate.Time, 24*time.Hour))
			}
		}
	case models.ChannelEmail:
		m.Subject, m.Email = fill.Replace(wf.subject), sub.Email
		m.Content = append(m.Content, models.ContentBlock{Type: "button", Content: wf.button, URL: url, Styles: &models.ContentStyles{TextAlign: "center"}})
	case models.ChannelSMS:
		m.Phone = sub.Phone
	case models.ChannelChat:
		m.DirectWebhookURL = "https://hooks.example.com/services/" + g.env.ID
		for _, c := range sub.Channels {
			if c.Credentials != nil && c.Credentials.WebhookURL != "" {
				m.DirectWebhookURL = c.Credentials.WebhookURL
			}
		}
	case models.ChannelPush:
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
