/*
 * transfer.pml -- Promela model of the Ledgerline Transfers pipeline
 *                 (README "How a transfer moves": lock -> claim -> send ->
 *                 fence -> release, plus the sweeper / reconciler), for ONE
 *                 transfer row, with the send split into dispatch, effect and
 *                 resolution so that a request can outlive its caller.
 *
 * Checked by src/test/java/dev/ledgerline/transfers/model/ProtocolModelTest.java.
 * By hand (any empty directory; spin -a writes pan.* into the cwd):
 *
 *   safety (all assertions P1/P2/P3/P5 + invalid end states = stuck transfer):
 *     spin -a transfer.pml && gcc -O2 -DSAFETY -DNOCLAIM -o pan pan.c && ./pan -m100000 -w22
 *   each LTL property on its own (assertions compiled out with -DLTL_ONLY):
 *     spin -DLTL_ONLY -a transfer.pml && gcc -O2 -DNFAIR=3 -o pan pan.c
 *     ./pan -a    -m100000 -w22 -N p1_at_most_one_execution      (likewise p2, p3, p5)
 *     ./pan -a -f -m100000 -w22 -N p4_eventually_terminal        (weak fairness)
 *   a mutant: add -DMUTANT_OLD_DEADLINE_RULE (etc.) to the spin -a line;
 *   read a counterexample: spin [-DMUTANT_...] [-DLTL_ONLY] -t transfer.pml
 *     (the '@' lines are the narrative: every claim, dispatch, effect, resolution,
 *      deadline, lookup and UPDATE; add -p -g for every step and variable)
 *   larger bounds: spin -DFAULTS=3 -DPAUSES=3 -a transfer.pml ...
 *   a provider whose lookup never lags: -DNO_LOOKUP_LAG
 *
 * ---------------------------------------------------------------------------
 * THE IN-TRANSIT RULE (what the model checks)
 *   A send is three separate things:
 *     dispatch    the request leaves with deadline D = the claim's stored
 *                 send_not_after (header Ledgerline-Not-After);
 *     effect      the provider applies it at any later moment -- also after the
 *                 caller timed out, fenced the row to 'reconciling' and a
 *                 reconciler acted -- but only while D has not passed (it
 *                 refuses a later one with 412, without executing);
 *     resolution  the caller sees completed / rejected / unknown (timeout, 5xx,
 *                 412); "unknown" is independent of the effect: the effect may
 *                 come before it, after it, or never.
 *   The claim stores D = least(lease end - margin, claim time + provider
 *   timeout).  Nothing decides on a lookup, and nothing claims the row again,
 *   until the latest claim's D + margin + lookup lag has passed (SETTLED below):
 *   by then no earlier request can execute any more and every execution shows
 *   in a lookup.
 *
 * ---------------------------------------------------------------------------
 * MODEL STEP                     JAVA                           SQL / REDIS
 * ---------------------------------------------------------------------------
 * Worker1, Worker2               pipeline.TransferProcessor#process(id)
 *   (two dispatches of the same pending row: the async dispatch after the
 *    insert commits, and a second one from another instance)
 * (1) acquire                    RedisLock#acquire              SET lock:transfer:{id} <token> NX PX ttl
 *       "OK"    -> lock_owner = me (key absent, or the holder's ttl ran out)
 *       nil     -> stop (only possible while the key is held)
 *       Redis unavailable -> go on to the claim (the DB is the guard)
 * (2) claim  (one atomic step)   TransferRepository#claim       UPDATE transfers SET status='processing',
 *                                                                 version=version+1, claimed_by=$2,
 *                                                                 lease_expires_at=now()+lease,
 *                                                                 send_not_after=least(now()+lease-margin,
 *                                                                   now()+provider timeout)
 *                                                               WHERE id=$1 AND status=$expected
 *                                                                 AND version=$expectedVersion     (*)
 *                                                                 AND (send_not_after IS NULL OR
 *                                                                   send_not_after+settle <= now())
 *                                                               RETURNING provider_reference, version,
 *                                                                 send_not_after
 *       claims++ : this claim's number k; row_claim = k is the stored send_not_after D_k
 *       no row -> release the lock, stop, never call the provider
 *     lease check                TransferProcessor#sendAndFence (local) lease left >= provider timeout
 *                                                                 + margin, else send nothing and fence
 *                                                                 the row to 'reconciling' (4)
 * (3a) dispatch                  provider.DeadlineFilter        the REST client request filter, at the
 *                                                               last moment before the wire: D_k passed
 *                                                               -> not written (outcome unknown, nothing
 *                                                               left the process); else POST payment with
 *                                                               Idempotency-Key, Ledgerline-Not-After: D_k
 *                                                               -> wire bit k
 * (3b) effect   (Provider proc)  the provider (SandboxLedger#send) applies request k while D_k has not
 *                                passed: executes (executions++) or rejects it definitively
 * (3c) resolution                ProviderClient#send outcome   completed (k executed) / rejected (k
 *                                                               rejected) / unknown: timeout, 5xx (any
 *                                                               time, uses FAULTS) or 412 / timeout
 *                                                               after D_k passed unapplied
 * (4) fence  (one atomic step)   TransferRepository#fence       UPDATE transfers SET status=$s,
 *                                                                 version=version+1,
 *                                                                 next_attempt_at=greatest(now()+backoff,
 *                                                                   send_not_after+settle)
 *                                                               WHERE id=$1 AND version=$claimed
 *                                                               (FenceQueue may carry several transfers'
 *                                                               fences in one statement; each row is still
 *                                                               written only at its own claimed version, so
 *                                                               for ONE transfer it is this same step)
 *       zero rows -> stale worker: stale_fences++, change nothing
 * (5) release                    RedisLock#release              EVAL "if GET(key)==token then DEL" (never DEL)
 *
 * Sweeper                        pipeline.Sweeper (one scheduled instance)
 *   dispatch                     Sweeper#dispatchPending        pending row -> process(id) with
 *                                                                 expected (pending, 0)
 *   expire (SELECT, then UPDATE) Sweeper#expireLeases,          UPDATE transfers SET status='reconciling',
 *                                TransferRepository#expireLeases  version=version+1, next_attempt_at=
 *                                                                 greatest(now(), send_not_after+settle)
 *                                                               FROM (SELECT ... WHERE status='processing'
 *                                                                 AND lease_expires_at < now()
 *                                                                 FOR UPDATE SKIP LOCKED) due
 *                                                               WHERE ... AND status='processing'
 *                                                                 AND lease_expires_at < now()
 *       One statement in the code (the row is locked from its SELECT to its UPDATE); the model
 *       splits it into a read of version v and an UPDATE that re-checks version=v, which
 *       allows every interleaving the single statement allows, and more.
 *   take (row at version v)      TransferRepository#takeReconciling  ... WHERE status='reconciling'
 *                                                                 AND next_attempt_at <= now()
 *                                                                 AND send_not_after+settle <= now()
 *   reconcile                    Sweeper#reconcile, ProviderClient#lookup(reference)
 *       completed  -> fence(v, sent)                            (same fenced UPDATE, version=$v)
 *       rejected   -> fence(v, failed)
 *       not found  -> process(id) with expected (reconciling, v): lock, claim, send again with
 *                     the same reference, fence
 *       lookup error -> back off, retry later                   (uses FAULTS)
 *   settle = margin + ledgerline provider lookup-lag bound.
 *
 * Environment
 *   Clock          DB/provider time: D_k passes (dl_upto), D_k + margin + lag passes (settled_upto),
 *                  the lease of the current claim expires (leases_expired_upto, by version).
 *                  A lease ends after D_k + margin, so a lease expires only once D_k passed.
 *   Provider       applies requests on the wire (executes or rejects) while their D has not passed;
 *                  an execution may stay invisible to lookup (lag) until its claim is settled.
 *   lock ttl       folded into acquire ("OK" although held = the holder's PX ttl ran out).
 *   crash          an instance killed right after its claim or right after the send resolved:
 *                  it never resumes; its lease then always expires.
 *
 * (*) FINDING (first model).  The first design claimed with
 *       WHERE id=$1 AND status IN ('pending','reconciling')
 *     which lets a process(id) started for the PENDING row claim the row after
 *     the first worker's send executed-then-timed-out and was fenced to
 *     'reconciling', and send again without a lookup -> two executions.  The
 *     claim takes the status AND version its caller observed
 *     (TransferRepository.Seen); the old claim is MUTANT_CLAIM_WITHOUT_EXPECTED_VERSION.
 *
 * (**) FINDING (this model).  The old rule -- D = lease end - margin, and the
 *     reconciler may look up and claim at now() + backoff -- lets a lookup decide
 *     while an earlier request is still on the wire.  Counterexample of the
 *     assertion run of MUTANT_OLD_DEADLINE_RULE with NO_LOOKUP_LAG (so not even
 *     a lagging lookup is needed), its '@' lines, trail of 80 steps:
 *       [3] claim k=1 -> v1;  D_1 passes;  lease of v1 expires  (the holder paused)
 *       [3] lease of v1 too short: nothing sent;  fence v1 -> RECONCILING
 *       sweeper takes v2, lookup: not found
 *       [3] claim k=2 -> v3;  dispatch k=2;  resolution of k=2: UNKNOWN (timeout)
 *       fence v3 -> RECONCILING
 *       sweeper takes v4, lookup: not found          <- k=2 is still on the wire
 *       provider executes k=2 (executions=1);  D_2 passes
 *       [3] claim k=3 -> v5;  dispatch k=3;  provider executes k=3 (executions=2)  P1
 *     The ltl runs break P1 and P5 (the resend completes and the row says sent
 *     after two executions).  This is the issue's timeline: a held request, the
 *     5 s timeout, a 404, a resend, the late arrival executed before its deadline.
 *     MUTANT_LOOKUP_LAG_NOT_WAITED waits for D + margin but not for the lookup
 *     lag: a lookup misses an execution that already happened and the
 *     reconciler resends (P1), or fences 'failed' on an earlier rejection (P5).
 *
 * ---------------------------------------------------------------------------
 * PROPERTIES
 *   P1  at most one execution at the provider        assert at each effect + ltl p1_at_most_one_execution
 *   P2  no write after a terminal status (sent/failed: status and version never change)
 *                                                    assert in every UPDATE + ltl p2_no_write_after_terminal
 *   P3  every successful UPDATE comes from the holder of the current version: the writer's
 *       version (claim's RETURNING version for a fence, the version read for expire/reconcile,
 *       the version observed before a claim) equals the row's version at that moment
 *                                                    assert in every UPDATE + ltl p3_no_stale_write
 *   P4  provider eventually healthy + weak fairness => <> (status==sent || status==failed)
 *                                                    ltl p4_eventually_terminal, pan -a -f
 *   P5  sent => executions == 1, failed => executions == 0, at every moment (so also after a
 *       late request executed)                       assert when the sweeper ends, once every
 *                                                    deadline passed + ltl p5_outcome_matches_provider
 *   safety run also reports invalid end states: every process blocked while the row is not
 *   terminal would be a transfer stuck forever.
 *
 *   witnesses (must be VIOLATED, i.e. reachable, so the checks are not vacuous):
 *     w1_stale_fence_reachable    a stale worker's fence matches zero rows
 *     w2_killed_worker_recovered  Worker1 is killed after its claim/send, the transfer still ends
 *     w3_effect_after_give_up     a request executes after its caller resolved it as unknown
 *                                 (or died) -- the in-transit case itself
 *
 * MUTANTS (spin -D...)              what changes                      counterexample for
 *   MUTANT_NO_FENCE_VERSION                (a) fence WHERE id=$1             P2, P3
 *   MUTANT_NO_CLAIM_STATUS                 (b) claim WHERE id=$1 (+ settled) P1, P2, P3, P5
 *   MUTANT_RESEND_WITHOUT_LOOKUP           (c) reconcile re-claims and
 *                                              resends without a lookup      P1, P5
 *   MUTANT_CLAIM_WITHOUT_EXPECTED_VERSION  first design's claim, see (*)     P1, P3, P5
 *   MUTANT_NO_EXPIRE_LEASES                sweeper never expires leases      P4 (and an invalid
 *                                                                            end state: stuck)
 *   MUTANT_OLD_DEADLINE_RULE               take and claim do not wait for
 *                                          send_not_after + settle, see (**) P1, P5
 *                                          (checked with -DNO_LOOKUP_LAG: a provider whose
 *                                           lookup never lags, so only the in-transit gap is left)
 *   MUTANT_LOOKUP_LAG_NOT_WAITED           they wait for D + margin only     P1, P5
 *   MUTANT_PROVIDER_IGNORES_DEADLINE       the provider executes a request
 *                                          whenever it arrives               P1, P5
 *   MUTANT_NO_LEASE_CHECK                  send without the lease check      none: the deadline
 *       (a lease ends after D + margin, so a send past its lease is refused by DeadlineFilter or
 *        the provider; the lease check only spares a doomed request.  ProtocolModelTest asserts
 *        that P1 and P5 HOLD for it, so the claim "the deadline, not the lease check, fences the
 *        send" is itself checked.)
 *   ("counterexample for" = the ltl blocks that fail, each run on its own; the
 *   other ltl blocks hold for that mutant or were not run by the test.)
 *
 * ---------------------------------------------------------------------------
 * ASSUMPTIONS
 *   A1 Time.  One DB clock; the provider's and the workers' clocks are within
 *      the configured margin of it, so "D_k passed" (+margin) is one event for
 *      all parties.  D_k <= lease end - margin, hence a lease expires only after
 *      its D_k passed.  The time between claim and dispatch, and on the wire,
 *      is unbounded: D_k may pass at any moment (the sender paused, the request
 *      was held); after that request k can never execute.
 *   A2 Leases and deadlines expire in claim order (one DB clock, fixed lease
 *      length and provider timeout), so they are summarised by the last
 *      version/claim number that expired (leases_expired_upto, dl_upto,
 *      settled_upto).
 *   A3 The provider is non-idempotent and honest up to a bounded lag: every
 *      executed request counts; lookup(reference) reports completed if an
 *      execution is visible, rejected if a request was rejected and no
 *      execution is visible, else not found.  An execution of request k becomes
 *      visible at any moment, and at the latest when D_k + margin + lag passed.
 *      A rejection is visible at once.  The provider enforces Ledgerline-Not-After.
 *   A4 "Eventually healthy": FAULTS bounds unknown resolutions (timeout, 5xx)
 *      and lookup errors; PAUSES bounds deadlines passing while the request's
 *      sender is still alive and waiting (sender paused / request held) and
 *      lease expiries of a live holder.  Rejections, Redis outages, lock
 *      takeovers and crashes are unbounded (crashes: each worker at most once;
 *      it never resumes).
 *   A5 Each UPDATE is one atomic step (single-row statement); the sweeper's
 *      SELECT and its UPDATE are separate steps.
 *   A6 Redis may be unavailable at any acquire (then the claim goes straight to
 *      PostgreSQL) and a lock may be lost/expire at any time.  Modelled as the
 *      nondeterministic result of each acquire; a release while Redis is down
 *      and the key of a killed worker are treated as expired at once.
 *      No property depends on the lock: every path that skips it is included.
 *
 * NOT COVERED
 *   - A provider that ignores Ledgerline-Not-After (MUTANT_PROVIDER_IGNORES_DEADLINE
 *     shows the double execution); then only its Idempotency-Key handling
 *     (provider_reference) protects the payment, which the model does not check.
 *     DeadlineFilter is not load-bearing here for the same reason: the provider
 *     refuses what the filter would have held back.
 *   - Clock skew beyond the configured margin; a lookup lag beyond the
 *     configured bound; lost payments; a rejection after an execution of the
 *     same reference.
 *   - Redis clock behaviour and TTL precision (the lock may expire at any time here).
 *   - Several sweeper instances (FOR UPDATE SKIP LOCKED); the fixed claim
 *     (status + version + settled) is what makes concurrent reconcilers safe,
 *     argued, not checked.  More than two workers, more than one transfer.
 *   - Timing/backoff values, attempts, transfer_events rows, the HTTP layer and
 *     the API's idempotency keys.  That includes cutting a back-off short once
 *     the provider recovers (TransferRepository#hastenReconciling): it moves
 *     only next_attempt_at, never to before send_not_after+settle, and changes
 *     no status or version; the take above still requires the row settled, and
 *     the model already lets the take happen at any time after that.
 *   - A send the provider refuses with an unexplained 4xx (refused_sends) and
 *     parking a transfer after ledgerline.pipeline.max-refused-sends of them:
 *     a refusal is one more unknown resolution here; a parked transfer waits for
 *     an operator, which P4 does not cover.
 *   - Bounds: FAULTS=2, PAUSES=2 by default (override with -D, FAULTS + PAUSES
 *     <= 10); at most MAXK-1 = FAULTS + PAUSES + 2 claims (asserted).
 */

/* ======================================================================== */
/*  Bounds (override with spin -DFAULTS=3 -DPAUSES=3 ...)                    */
/* ======================================================================== */
#ifndef FAULTS
#define FAULTS 2   /* unknown resolutions (timeout / 5xx) and lookup errors  */
#endif
#ifndef PAUSES
#define PAUSES 2   /* deadlines / leases passing while their sender is alive */
#endif
#if FAULTS + PAUSES > 10
#error "the Provider below spells out requests 1..12: FAULTS + PAUSES <= 10"
#endif
/* claim numbers run 1..MAXK-1: the first claim, one more per unknown outcome
   or pause, and one after a killed worker                                   */
#define MAXK (FAULTS + PAUSES + 3)

/* assertions are the -DSAFETY run's checks; the LTL runs are built with
   -DLTL_ONLY so that each never claim is judged on its own                  */
#ifdef LTL_ONLY
#define ASSERT(c) skip
#else
#define ASSERT(c) assert(c)
#endif

/* The printf lines ("@ ...") are the narrative of a trail replay (spin -t);
   pan does not execute them, so they cost no states.  [1] = Worker1,
   [2] = Worker2, [3] = Sweeper.                                              */

/* actors (also the lock token and the claimed_by value) */
#define NOBODY  0
#define W1      1
#define W2      2
#define SWEEPER 3

mtype = { PENDING, PROCESSING, SENT, FAILED, RECONCILING,   /* transfers.status */
          COMPLETED, REJECTED, UNKNOWN };                    /* send outcome     */

#define TERMINAL (status == SENT || status == FAILED)
#define BIT(k)   (1 << (k))
#define HAS(m,k) (((m) >> (k)) & 1)

/* ---- the transfers row (PostgreSQL) ------------------------------------ */
mtype status  = PENDING;
byte  version = 0;
byte  claimed_by = NOBODY;
byte  row_claim = 0;       /* send_not_after: D of claim number row_claim
                              (0 = no claim yet, column NULL)                */

/* ---- time (A1, A2) --------------------------------------------------------- */
byte  leases_expired_upto = 0;  /* lease of the claim that produced version
                                   c has expired  <=>  c <= this            */
byte  claims = 0;               /* claims so far; claim k has number k       */
byte  dl_upto = 0;              /* D_k (+margin) passed  <=>  k <= dl_upto    */
byte  settled_upto = 0;         /* D_k + margin + lag passed; <= dl_upto     */

/* ---- Redis ---------------------------------------------------------------- */
byte  lock_owner = NOBODY;          /* value of lock:transfer:{id}, 0 = absent */

/* ---- provider (non-idempotent, lookup may lag) ----------------------------- */
int   wire    = 0;                  /* bit k: request k dispatched, not applied,
                                       may still execute (cleared when D_k passes) */
int   exec_m  = 0;                  /* bit k: request k executed               */
int   unseen  = 0;                  /* bit k: executed, lookup does not show it yet */
int   rej_m   = 0;                  /* bit k: request k rejected definitively  */
byte  executions = 0;               /* every execution counts                  */

/* ---- environment budgets ----------------------------------------------------- */
byte  faults = FAULTS;
byte  pauses = PAUSES;
int   open_m = 0;                   /* bit k: claim k's holder is alive and has
                                       not resolved its send yet              */
bit   crashed[4];                   /* instance killed (worker never resumes) */

/* ---- ghosts / observability ----------------------------------------------- */
byte  stale_fences = 0;             /* fence matched zero rows (counted)       */
bit   p2_write_after_terminal = 0;  /* some UPDATE hit a sent/failed row      */
bit   p3_stale_write = 0;           /* some UPDATE by a writer whose version
                                       is not the row's current version      */
bit   late_effect = 0;              /* a request executed after its caller
                                       gave up on it (witness w3)             */

/* ---- the in-transit rule: may a lookup decide / may the row be claimed? --- */
#if defined(MUTANT_OLD_DEADLINE_RULE)
/* old rule: D = lease end - margin; the reconciler takes the row at
   now()+backoff and the claim does not look at D                             */
#define SETTLED (true)
#elif defined(MUTANT_LOOKUP_LAG_NOT_WAITED)
/* waits for send_not_after + margin, forgets the provider's lookup lag       */
#define SETTLED (dl_upto >= row_claim)
#else
/* send_not_after + margin + lookup lag <= now()                              */
#define SETTLED (settled_upto >= row_claim)
#endif

/* Every successful UPDATE goes through this.  `held` is the version the
   writer holds: RETURNING version of its claim (worker fence), the version it
   read (sweeper expire / reconcile), or the version it observed before
   dispatching the claim (0 for a pending row, v for reconciling@v).         */
inline write_check(held) {
  if :: TERMINAL        -> p2_write_after_terminal = 1 :: else -> skip fi;
  if :: held != version -> p3_stale_write = 1          :: else -> skip fi;
  ASSERT(!p2_write_after_terminal);   /* P2 */
  ASSERT(!p3_stale_write)             /* P3 */
}

/* ---- TransferRepository#claim WHERE clause -------------------------------- */
#if defined(MUTANT_NO_CLAIM_STATUS)
/* (b) WHERE id=$1 (the send_not_after guard stays)                          */
#define CLAIM_WHERE(exp_s, exp_v) (SETTLED)
#elif defined(MUTANT_CLAIM_WITHOUT_EXPECTED_VERSION)
/* first design: WHERE id=$1 AND status IN ('pending','reconciling')         */
#define CLAIM_WHERE(exp_s, exp_v) ((status == PENDING || status == RECONCILING) && SETTLED)
#else
/* WHERE id=$1 AND status=$expected AND version=$expectedVersion
         AND (send_not_after IS NULL OR send_not_after + settle <= now())    */
#define CLAIM_WHERE(exp_s, exp_v) (status == exp_s && version == exp_v && SETTLED)
#endif

/* ---- TransferRepository#fence WHERE clause -------------------------------- */
#ifdef MUTANT_NO_FENCE_VERSION
#define FENCE_WHERE(held) (true)                 /* (a) WHERE id=$1            */
#else
#define FENCE_WHERE(held) (version == held)      /* WHERE id=$1 AND version=$v */
#endif

/* TransferRepository#fence: UPDATE ... SET status=$s, version=version+1
   WHERE id=$1 AND version=$held  -- zero rows: stale, count it, change nothing */
inline fence(held, new_status) {
  atomic {
    if
    :: FENCE_WHERE(held) ->
         write_check(held);
         status = new_status; version++;
         printf("@ fence v%d -> %e\n", held, new_status)
    :: else ->
         stale_fences++;
         printf("@ fence v%d matches no row (stale)\n", held)
    fi
  }
}

inline release_if_mine(me) {
  atomic { if :: lock_owner == me -> lock_owner = NOBODY :: else -> skip fi }
}

/* the holder of claim k dies: it never resolves, its lease will expire */
inline crash(me, k) {
  atomic {
    crashed[me] = 1; open_m = open_m & ~BIT(k);
    if :: lock_owner == me -> lock_owner = NOBODY :: else -> skip fi;
    printf("@ [%d] killed\n", me)
  }
}

/* TransferProcessor#process(id) = lock -> claim -> send -> fence -> release.
   (exp_s, exp_v) is what the caller observed: (PENDING, 0) for a dispatch,
   (RECONCILING, v) for the reconciler after lookup said "not found".
   Used exactly once per proctype (it contains labels).                     */
inline process_transfer(me, exp_s, exp_v) {
  /* (1) RedisLock#acquire: SET lock:transfer:{id} <token> NX PX ttl       */
  if
  :: lock_owner = me    /* OK: key absent, or the
                                       previous holder's PX ttl ran out      */
  :: atomic { lock_owner != NOBODY } -> goto pl_release  /* nil: held, stop  */
  :: skip                              /* Redis unavailable: DB is the guard  */
  fi;

  /* (2) TransferRepository#claim (stores send_not_after = D_k)              */
  atomic {
    if
    :: CLAIM_WHERE(exp_s, exp_v) ->
         write_check(exp_v);
         status = PROCESSING; version++; claimed_by = me; my_ver = version;
         claims++; my_k = claims; row_claim = my_k; open_m = open_m | BIT(my_k);
         assert(claims < MAXK);                     /* model bound, not a property */
         printf("@ [%d] claim k=%d -> v%d\n", me, my_k, my_ver)
    :: else -> my_ver = 0                      /* no row: never call provider */
    fi
  };
  if :: my_ver == 0 -> goto pl_release :: else -> skip fi;

  /* pause point: the worker may stall here for any time (its deadline, lease
     and Redis lock may pass meanwhile) -- or the instance may be killed     */
  if :: me != SWEEPER -> crash(me, my_k); goto pl_end :: skip fi;

#ifndef MUTANT_NO_LEASE_CHECK
  /* TransferProcessor#sendAndFence: the lease must still cover a full
     provider timeout, else nothing is sent and the worker fences the row to
     'reconciling' itself ("lease too short to send")                        */
  if
  :: atomic { my_ver > leases_expired_upto -> skip }
  :: atomic { my_ver <= leases_expired_upto -> open_m = open_m & ~BIT(my_k);
              outcome = UNKNOWN;
              printf("@ [%d] lease of v%d too short: nothing sent\n", me, my_ver) } ->
       goto pl_fence
  fi;
#endif

  /* (3a) dispatch through provider.DeadlineFilter                           */
  atomic {
    if
    :: dl_upto < my_k -> wire = wire | BIT(my_k); outcome = 0;
         printf("@ [%d] dispatch k=%d\n", me, my_k)
    :: else -> outcome = UNKNOWN;              /* D_k passed: not written     */
         printf("@ [%d] D_%d passed: k=%d not written\n", me, my_k, my_k)
    fi
  };

  /* (3c) resolution; the effect (3b) is the Provider's, see below           */
  atomic {
    if
    :: outcome == UNKNOWN -> skip                                /* not written */
    :: outcome == 0 && HAS(exec_m, my_k) -> outcome = COMPLETED
    :: outcome == 0 && HAS(rej_m, my_k)  -> outcome = REJECTED
    :: outcome == 0 && !HAS(wire | exec_m | rej_m, my_k) ->
         outcome = UNKNOWN                      /* D_k passed unapplied: 412 / timeout */
    :: outcome == 0 && faults > 0 -> faults--;
         outcome = UNKNOWN                      /* timeout / 5xx, whatever the effect */
    fi;
    open_m = open_m & ~BIT(my_k);
    printf("@ [%d] resolution of k=%d: %e\n", me, my_k, outcome)
  };

  /* pause point after the send resolved (lease may expire) / crash point   */
  if :: me != SWEEPER -> crash(me, my_k); goto pl_end :: skip fi;

pl_fence:
  /* (4) TransferRepository#fence */
  if
  :: outcome == COMPLETED -> fence(my_ver, SENT)
  :: outcome == REJECTED  -> fence(my_ver, FAILED)
  :: outcome == UNKNOWN   -> fence(my_ver, RECONCILING)
  fi;

pl_release:
  /* (5) RedisLock#release: Lua  if GET(key)==token then DEL(key)            */
  atomic {
    if
    :: lock_owner == me -> lock_owner = NOBODY
    :: else -> skip                    /* not ours any more (ttl ran out)     */
    fi;
    my_ver = 0; my_k = 0; outcome = 0   /* forget locals        */
  };
pl_end:
  skip
}

/* ======================================================================== */
/*  Two workers: each is one TransferProcessor#process(id) call for the      */
/*  pending row (async dispatch after the insert commits, and a second       */
/*  dispatch of the same row from another instance).                         */
/* ======================================================================== */
active proctype Worker1() {
  byte  my_ver, my_k;
  mtype outcome;
  process_transfer(W1, PENDING, 0)
}

active proctype Worker2() {
  byte  my_ver, my_k;
  mtype outcome;
  process_transfer(W2, PENDING, 0)
}

/* ======================================================================== */
/*  pipeline.Sweeper (dispatchPending / expireLeases / reconcile)            */
/* ======================================================================== */
active proctype Sweeper() {
  byte  my_ver, my_k, v;
  mtype outcome, exp_s;

sw_loop:
  if
  :: TERMINAL -> goto sw_done

  /* Sweeper#dispatchPending: a pending row -> run the worker pipeline      */
  :: atomic { status == PENDING -> exp_s = PENDING; v = version } -> goto sw_pipeline

  /* Sweeper#expireLeases: SELECT a processing row whose lease expired, then
     TransferRepository#expireLeases: UPDATE ... SET status='reconciling',
     version=version+1 WHERE id=$1 AND status='processing'
     AND lease_expires_at < now() AND version=$v                            */
#ifndef MUTANT_NO_EXPIRE_LEASES
  :: atomic { status == PROCESSING && version <= leases_expired_upto -> v = version } ->
       atomic {
         if
         :: status == PROCESSING && version == v && version <= leases_expired_upto ->
              write_check(v);
              status = RECONCILING; version++;
              printf("@ sweeper expires the lease of v%d -> reconciling\n", v)
         :: else -> skip
         fi;
         v = 0
       };
       goto sw_loop
#endif

  /* TransferRepository#takeReconciling: a reconciling row at version v whose
     latest send is settled (send_not_after + settle <= now())              */
  :: atomic { status == RECONCILING && SETTLED -> v = version } ->
#ifdef MUTANT_RESEND_WITHOUT_LOOKUP
       exp_s = RECONCILING; goto sw_pipeline       /* (c) blind resend      */
#else
       /* Sweeper#reconcile: ProviderClient#lookup(reference)                */
       if
       :: atomic { faults > 0 -> faults--; v = 0 } -> goto sw_loop   /* lookup error: back off */
       :: atomic { (exec_m & ~unseen) != 0 ->                       /* completed */
            printf("@ sweeper takes v%d, lookup: completed\n", v) };
            fence(v, SENT); v = 0; goto sw_loop
       :: atomic { (exec_m & ~unseen) == 0 && rej_m != 0 ->          /* rejected  */
            printf("@ sweeper takes v%d, lookup: rejected\n", v) };
            fence(v, FAILED); v = 0; goto sw_loop
       :: atomic { (exec_m & ~unseen) == 0 && rej_m == 0 ->          /* not found */
            printf("@ sweeper takes v%d, lookup: not found\n", v) };
            exp_s = RECONCILING; goto sw_pipeline
       fi
#endif
  fi;

sw_pipeline:
  process_transfer(SWEEPER, exp_s, v);
  atomic { exp_s = 0; v = 0 };
  goto sw_loop;

sw_done:
  /* at the end, once no request can execute any more:
     sent => exactly one execution; failed => none                          */
  (dl_upto == claims);
  ASSERT(status != SENT   || executions == 1);
  ASSERT(status != FAILED || executions == 0)
}

/* ======================================================================== */
/*  Environment                                                               */
/* ======================================================================== */

/* (3b) The provider applies request k, at any moment after its dispatch and
   before D_k passes: executes it, or rejects it definitively.  An execution
   may stay invisible to lookup (lag) until it shows -- at the latest when
   D_k + margin + lag passes (Clock).                                         */
#ifdef MUTANT_PROVIDER_IGNORES_DEADLINE
#define APPLICABLE(k) (HAS(wire, k))
#else
#define APPLICABLE(k) (HAS(wire, k) && k > dl_upto)
#endif
#ifdef NO_LOOKUP_LAG
#define LAG(k) skip                          /* lookup shows it at once     */
#else
#define LAG(k) unseen = unseen | BIT(k)      /* lookup may not show it yet  */
#endif
#define EFFECT(k) \
  :: atomic { APPLICABLE(k) -> \
       wire = wire & ~BIT(k); \
       if \
       :: executions++; exec_m = exec_m | BIT(k); LAG(k); \
          if :: !HAS(open_m, k) -> late_effect = 1 :: else -> skip fi; \
          printf("@ provider executes k=%d (executions=%d)\n", k, executions) \
       :: rej_m = rej_m | BIT(k); printf("@ provider rejects k=%d\n", k) \
       fi; \
       ASSERT(executions <= 1) }
#define SHOWS(k) \
  :: atomic { HAS(unseen, k) -> unseen = unseen & ~BIT(k) }

active proctype Provider() {
end_provider:
  do
  EFFECT(1)
  EFFECT(2)
  EFFECT(3)
  EFFECT(4)
  EFFECT(5)
  EFFECT(6)
  EFFECT(7)
  EFFECT(8)
  EFFECT(9)
  EFFECT(10)
  EFFECT(11)
  EFFECT(12)
  SHOWS(1)
  SHOWS(2)
  SHOWS(3)
  SHOWS(4)
  SHOWS(5)
  SHOWS(6)
  SHOWS(7)
  SHOWS(8)
  SHOWS(9)
  SHOWS(10)
  SHOWS(11)
  SHOWS(12)
  od
}

/* Time.  Deadlines pass in claim order.  D_k passing while claim k's holder
   is alive and has not resolved its send (it paused, or its request is held
   on the wire) uses the PAUSES budget; otherwise it always passes eventually.
   Settling (D + margin + lag) follows the deadline and makes every execution
   of a settled claim visible.  The lease of the current claim expires only
   after its D passed; expiring the lease of a holder that is still alive
   (it paused past its lease) uses PAUSES, a killed holder's always expires. */
active proctype Clock() {
end_clock:
  do
  :: atomic { dl_upto < claims && (!HAS(open_m, dl_upto + 1) || pauses > 0) ->
                if :: HAS(open_m, dl_upto + 1) -> pauses-- :: else -> skip fi;
                dl_upto++;
#ifndef MUTANT_PROVIDER_IGNORES_DEADLINE
                wire = wire & ~BIT(dl_upto);
#endif
                printf("@ D_%d passes\n", dl_upto) }
  :: atomic { settled_upto < dl_upto ->
                settled_upto++; unseen = unseen & ~BIT(settled_upto) }
  :: atomic { status == PROCESSING && version > leases_expired_upto && dl_upto >= row_claim &&
              (crashed[claimed_by] || pauses > 0) ->
                if :: crashed[claimed_by] -> skip :: else -> pauses-- fi;
                leases_expired_upto = version;
                printf("@ lease of v%d expires\n", version) }
  od
}

/* ======================================================================== */
/*  Properties                                                                */
/* ======================================================================== */
ltl p1_at_most_one_execution   { [] (executions <= 1) }
ltl p2_no_write_after_terminal { [] (!p2_write_after_terminal
                                     && (status == SENT   -> [] (status == SENT))
                                     && (status == FAILED -> [] (status == FAILED))) }
ltl p3_no_stale_write          { [] (!p3_stale_write) }
ltl p4_eventually_terminal     { <> (status == SENT || status == FAILED) }
ltl p5_outcome_matches_provider { [] ((status == SENT   -> executions == 1) &&
                                      (status == FAILED -> executions == 0)) }

/* Witnesses: expected to be VIOLATED by the correct model.  They show that the
   interleavings the properties are about are reachable (the checks are not
   vacuous): a stale worker is fenced off, a transfer whose worker was killed
   after its claim/send is still finished (by the sweeper), and a request
   executes after its caller gave up on it.                                   */
ltl w1_stale_fence_reachable   { [] (stale_fences == 0) }
ltl w2_killed_worker_recovered { [] !(crashed[W1] && (status == SENT || status == FAILED)) }
ltl w3_effect_after_give_up    { [] !late_effect }
