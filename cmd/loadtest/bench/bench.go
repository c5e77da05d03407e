package bench

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"messages/cmd/loadtest/api"
	"messages/cmd/loadtest/loopback"
	"messages/cmd/loadtest/measure"
	"messages/cmd/loadtest/serverdb"
)

// runBenchmark runs the scenarios and writes the report as a table and, when asked, JSON.
func runBenchmark(ctx context.Context, c config, stdout, log io.Writer) error {
	rep, err := benchmark(ctx, c, log)
	if err != nil {
		return err
	}
	if c.baselinePath != "" {
		if err := rep.applyBaseline(c.baselinePath); err != nil {
			return err
		}
	}
	rep.writeTable(stdout)
	if c.jsonPath != "" {
		return rep.writeJSONFile(c.jsonPath)
	}
	return nil
}

// cursorDepths maps each cursor scenario to the flag that sets its depth.
func cursorDepths(c config) map[string]int {
	return map[string]int{"graphql-cursor-deep": c.cursorDepth, "graphql-cursor-far": c.farCursorDepth}
}

// limits are the bounds of each measured run and of its warmup.
func (c config) limits() (run, warmup measure.Limits) {
	run = measure.Limits{Concurrency: c.concurrency, Duration: c.duration, MaxRequests: c.maxRequests, RequestTimeout: c.requestTimeout}
	warmup = run
	warmup.Duration = c.warmup
	return run, warmup
}

// benchmark discovers the data, runs the selected scenarios and then their floors, and
// returns the report. Progress goes to log.
func benchmark(ctx context.Context, c config, log io.Writer) (*benchReport, error) {
	client := loopback.NewHTTPClient(c.concurrency, c.requestTimeout, c.gzip)
	defer client.CloseIdleConnections()
	t := &target{Server: api.Server{BaseURL: c.baseURL, APIKey: c.apiKey}, pageSize: c.pageSize, deepPage: c.deepPage, cursors: map[string]string{}}
	rep := &benchReport{
		StartedAt: time.Now().UTC().Truncate(time.Second), BaseURL: c.baseURL,
		Settings: settings{Duration: c.duration.String(), Warmup: c.warmup.String(), Concurrency: c.concurrency,
			MaxRequests: c.maxRequests, PageSize: c.pageSize, DeepPage: c.deepPage, CursorDepth: c.cursorDepth,
			FarCursorDepth: c.farCursorDepth, Gzip: c.gzip},
	}
	if c.naive {
		rep.Settings.NaiveConcurrency = c.naiveConcurrency
	}

	setup, cancel := context.WithTimeout(ctx, c.setupTimeout)
	defer cancel()
	var db *sql.DB
	if c.databaseURL != "" {
		var err error
		if db, err = serverdb.Open(setup, c.databaseURL, c.concurrency*2); err != nil {
			return nil, err
		}
		defer db.Close()
	}
	fmt.Fprintln(log, "discovering the data through the API")
	ds, err := discover(setup, client, t, db)
	if err != nil {
		return nil, err
	}
	rep.Dataset = ds
	fmt.Fprintf(log, "environment %s: %d messages; inbox subscriber %s (%d messages, found by %s); %d transaction ids\n",
		ds.EnvironmentID, ds.TotalMessages, ds.InboxSubscriber, ds.InboxMessages, ds.FoundBy, len(ds.TransactionIDs))

	unavailable := findCursors(setup, client, t, c, log)
	var floors *floorRunner
	if db != nil && c.floor {
		if floors, err = newFloorRunner(setup, db, t, ds, c, log); err != nil {
			return nil, err
		}
	}
	if rep.Scenarios, rep.Server, err = runScenarios(ctx, client, t, c, unavailable, floors, log); err != nil {
		return nil, err
	}
	if floors != nil {
		if c.naive {
			floors.run(ctx, naiveFirstPage)
			floors.run(ctx, naiveDeepPage)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		rep.Floors = floors.results
		rep.linkFloors()
	}
	return rep, nil
}

// runScenarios runs each selected scenario (after a warmup) with the run's bounds,
// sampling the server's memory when its pid is known, and right after it, while the
// machine is in the same state, the floors it is compared with that have not run yet. A
// scenario that cannot run is reported unavailable, with the reason.
func runScenarios(ctx context.Context, client *http.Client, t *target, c config, unavailable map[string]string,
	floors *floorRunner, log io.Writer) ([]*result, *measure.ServerMemory, error) {
	var sampler *measure.RSSSampler
	if c.serverPID > 0 {
		var err error
		if sampler, err = measure.StartRSSSampler(c.serverPID, 50*time.Millisecond); err != nil {
			return nil, nil, err
		}
	}
	lim, warm := c.limits()
	var out []*result
	var peakKB int64
	for _, name := range c.scenarios {
		s := scenarioByName(name)
		why := unavailable[name]
		if why == "" && s.needs != nil {
			why = s.needs(t)
		}
		if why != "" {
			fmt.Fprintf(log, "%s: unavailable: %s\n", name, why)
			out = append(out, &result{Name: s.name, About: s.about, Unavailable: why})
			continue
		}
		op := httpOperation(client, t, s)
		fmt.Fprintf(log, "%s: %s, %d workers\n", name, c.duration, c.concurrency)
		if c.warmup > 0 {
			measure.Run(ctx, op, warm)
		}
		if sampler != nil {
			sampler.TakePeak()
		}
		res := newResult(s.name, s.about, measure.Run(ctx, op, lim), c.concurrency)
		res.Floor, res.FloorNoCount = s.floor, s.floorNoCount
		if sampler != nil {
			kb := sampler.TakePeak()
			res.PeakRSSMB = measure.Round2(float64(kb) / 1024)
			peakKB = max(peakKB, kb)
		}
		out = append(out, res)
		if floors != nil {
			floors.run(ctx, s.floor)
			floors.run(ctx, s.floorNoCount)
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
	}
	if sampler == nil {
		return out, nil, nil
	}
	st, err := sampler.Stop()
	if err != nil {
		fmt.Fprintf(log, "server memory: %v\n", err)
	}
	return out, &measure.ServerMemory{PID: c.serverPID, PeakRSSMB: measure.Round2(float64(peakKB) / 1024), HWMMB: measure.Round2(float64(st.HWMKB) / 1024)}, nil
}

// findCursors walks messagesConnection to the depths of the selected cursor scenarios and
// returns, for each that cannot run, why (the field does not exist yet, the list is shorter).
func findCursors(ctx context.Context, client *http.Client, t *target, c config, log io.Writer) map[string]string {
	depths := cursorDepths(c)
	var wanted []int
	for _, name := range c.scenarios {
		if d, ok := depths[name]; ok && !slices.Contains(wanted, d) {
			wanted = append(wanted, d)
		}
	}
	if len(wanted) == 0 {
		return nil
	}
	slices.Sort(wanted)
	fmt.Fprintf(log, "walking messagesConnection to depth %v, %d rows at a time\n", wanted, c.cursorStep)
	begin := time.Now()
	found, err := api.WalkCursors(ctx, client, t.Server, c.cursorStep, wanted)
	reasons := map[string]string{}
	for _, name := range c.scenarios {
		d, ok := depths[name]
		if !ok {
			continue
		}
		if cur, ok := found[d]; ok {
			t.cursors[name] = cur
		} else {
			reasons[name] = fmt.Sprintf("messagesConnection: %v", err)
		}
	}
	fmt.Fprintf(log, "cursor walk took %s\n", time.Since(begin).Round(time.Millisecond))
	return reasons
}

// floorRunner measures raw floors, each once, with the same bounds as the scenarios.
type floorRunner struct {
	floor   *rawFloor
	c       config
	log     io.Writer
	results []*result
}

// newFloorRunner finds what the floors need beyond discovery: the keyset position of
// each selected cursor scenario's depth.
func newFloorRunner(ctx context.Context, db *sql.DB, t *target, ds dataset, c config, log io.Writer) (*floorRunner, error) {
	depths := map[string]int{}
	for name, d := range cursorDepths(c) {
		if slices.Contains(c.scenarios, name) {
			depths[name] = d
		}
	}
	positions, err := keysetPositions(ctx, db, ds.EnvironmentID, depths)
	if err != nil {
		return nil, err
	}
	f := &rawFloor{db: db, environmentID: ds.EnvironmentID, pageSize: c.pageSize, deepOffset: c.deepPage * c.pageSize,
		inbox: t.inboxSubscriber, transactionIDs: t.transactionIDs, positions: positions}
	return &floorRunner{floor: f, c: c, log: log}, nil
}

// run measures the named floor unless it already ran (or name is empty).
func (r *floorRunner) run(ctx context.Context, name string) {
	if name == "" || ctx.Err() != nil || slices.ContainsFunc(r.results, func(res *result) bool { return res.Name == name }) {
		return
	}
	def := floorByName(name)
	switch {
	case def.inbox && r.floor.inbox == "":
		r.results = append(r.results, &result{Name: def.name, About: def.about, Unavailable: "no subscriber found"})
		return
	case def.transactions && len(r.floor.transactionIDs) == 0:
		r.results = append(r.results, &result{Name: def.name, About: def.about, Unavailable: "no transaction ids found"})
		return
	}
	op := r.floor.operation(def)
	lim, warm := r.c.limits()
	if def.naive {
		// Whole-row scans at full concurrency would only queue on the two cores for
		// minutes; the naive figures are the cost of such reads, a few at a time.
		lim.Concurrency = r.c.naiveConcurrency
	} else if r.c.warmup > 0 {
		measure.Run(ctx, op, warm)
	}
	fmt.Fprintf(r.log, "%s: %s, %d workers\n", name, r.c.duration, lim.Concurrency)
	r.results = append(r.results, newResult(def.name, def.about, measure.Run(ctx, op, lim), lim.Concurrency))
}
