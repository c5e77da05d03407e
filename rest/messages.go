package rest

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"messages/models"
	"messages/models/service"
)

// listMessages serves GET /v1/messages.
func (s *Server) listMessages(w http.ResponseWriter, r *http.Request) {
	values, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		// r.URL.Query() would silently drop the broken pair, and with it a filter.
		s.errors.WriteError(w, r, models.Errorf(models.EMALFORMED, "query string is malformed: %s", err))
		return
	}
	q, err := parseListQuery(values)
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	page, err := s.service.List(r.Context(), service.ListQuery{Filter: q.filter, Page: q.page, Limit: q.limit, Parts: models.Everything})
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	if err := writePage(w, page); err != nil {
		var re *recordError
		if errors.As(err, &re) {
			// The status has gone out: cut the response short, so that no client takes
			// the part written for a whole page.
			s.logger.ErrorContext(r.Context(), "page cut short", "method", r.Method, "path", r.URL.Path, "error", err)
			panic(http.ErrAbortHandler)
		}
		// Otherwise the client went away; there is no one to tell.
	}
}

// listQuery holds GET /v1/messages's query values in the service's input types.
type listQuery struct {
	filter      models.ListFilter
	page, limit *int
}

// parseListQuery reads the query string. Only the shape is checked here (integers are
// integers, brackets only where an array may have them, each single-valued parameter
// once); ranges, enums and defaults are the service's. A parameter it does not know is
// refused by name: ignored, a misspelt filter would answer the whole list.
func parseListQuery(v url.Values) (listQuery, error) {
	var q listQuery
	if err := refuseBracketForms(v); err != nil {
		return q, err
	}
	arrays := func(key string) bool { return arrayKey(key, "transactionId") || key == "contextKeys" }
	if err := checkParams(v, []string{"channel", "subscriberId", "page", "limit"}, arrays,
		"GET /v1/messages takes channel, subscriberId, transactionId, page and limit"); err != nil {
		return q, err
	}
	if keys := slices.DeleteFunc(slices.Clone(v["contextKeys"]), func(k string) bool { return k == "" }); len(keys) > 0 {
		return q, models.Invalid("contextKeys", keys,
			"this server keeps no contexts of messages and cannot filter by them: leave contextKeys out")
	}
	if c, ok := first(v, "channel"); ok {
		ch := models.ChannelType(c)
		q.filter.Channel = &ch
	}
	if sub, ok := first(v, "subscriberId"); ok {
		q.filter.SubscriberID = &sub
	}
	q.filter.TransactionIDs = arrayParam(v, "transactionId")
	var err error
	if q.page, err = intParam(v, "page"); err != nil {
		return q, err
	}
	if q.limit, err = intParam(v, "limit"); err != nil {
		return q, err
	}
	return q, nil
}

func first(v url.Values, key string) (string, bool) {
	vals, ok := v[key]
	if !ok || len(vals) == 0 {
		return "", false
	}
	return vals[0], true
}

func intParam(v url.Values, key string) (*int, error) {
	raw, ok := first(v, key)
	if !ok {
		return nil, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil {
		return nil, models.Invalid(key, raw, key+" must be an integer")
	}
	return &n, nil
}

// arrayParam collects an array sent in any of the encodings clients use: repeated keys
// (key=a&key=b), brackets as the axios-based Node SDK sends them (key[]=a&key[]=b), and
// indices (key[0]=a&key[1]=b, in index order). Other bracketed keys are refused before
// (refuseBracketForms).
func arrayParam(v url.Values, key string) []string {
	out := append([]string(nil), v[key]...)
	out = append(out, v[key+"[]"]...)
	type indexed struct {
		i    int
		vals []string
	}
	var byIndex []indexed
	for k, vals := range v {
		name, brackets, ok := strings.Cut(k, "[")
		if !ok || name != key {
			continue
		}
		if i, ok := bracketIndex(brackets); ok {
			byIndex = append(byIndex, indexed{i, vals})
		}
	}
	sort.Slice(byIndex, func(a, b int) bool { return byIndex[a].i < byIndex[b].i })
	for _, e := range byIndex {
		out = append(out, e.vals...)
	}
	return out
}

// listParams are GET /v1/messages's parameters, true for the one array.
var listParams = map[string]bool{"transactionId": true, "channel": false, "subscriberId": false, "page": false, "limit": false}

// refuseBracketForms refuses, naming the parameter, a key that is a parameter's name
// followed by "[" but not a form the API reads: anything but [] or [N] on transactionId
// (negative, signed or non-numeric indices, nested brackets) and any brackets on the
// single-valued parameters. Ignored, such a key would drop its filter and answer the
// whole list.
func refuseBracketForms(v url.Values) error {
	var bad []string
	for k := range v {
		name, brackets, ok := strings.Cut(k, "[")
		array, known := listParams[name]
		if !ok || !known {
			continue
		}
		if _, index := bracketIndex(brackets); array && (brackets == "]" || index) {
			continue
		}
		bad = append(bad, k)
	}
	if len(bad) == 0 {
		return nil
	}
	slices.Sort(bad) // the same refusal for the same query
	key := bad[0]
	name, _, _ := strings.Cut(key, "[")
	msg := name + " takes one value, as " + name + "=value, without brackets"
	if listParams[name] {
		msg = name + " is sent as " + name + "=a, " + name + "[]=a or " + name + "[0]=a, the index a non-negative integer"
	}
	return models.Invalid(name, quotedKey(key), msg)
}

// bracketIndex reads "N]", what follows "key[" in an indexed key, N a decimal integer
// of digits alone.
func bracketIndex(brackets string) (int, bool) {
	digits, ok := strings.CutSuffix(brackets, "]")
	if !ok || digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, false
	}
	i, err := strconv.Atoi(digits)
	return i, err == nil
}

// quotedKey is a refused key as the error body's value: valid UTF-8, cut past
// models.MaxFilterLength bytes and ending in "...".
func quotedKey(key string) string {
	if len(key) > models.MaxFilterLength {
		key = key[:models.MaxFilterLength] + "..."
	}
	return strings.ToValidUTF8(key, "\uFFFD")
}
