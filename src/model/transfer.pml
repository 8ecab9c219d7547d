/*
 * transfer.pml -- Promela model of the Ledgerline Transfers pipeline
 *                 (DESIGN.md §5-7: lock -> claim -> send -> fence -> release,
 *                 plus the sweeper / reconciler), for ONE transfer row.
 *
 * Checked by src/test/java/dev/ledgerline/transfers/model/ProtocolModelTest.java.
 * By hand (any empty directory; spin -a writes pan.* into the cwd):
 *
 *   safety (all assertions P1/P2/P3/P5 + invalid end states = stuck transfer):
 *     spin -a transfer.pml && gcc -O2 -DSAFETY -DNOCLAIM -o pan pan.c && ./pan -m100000
 *   each LTL property on its own (assertions compiled out with -DLTL_ONLY):
 *     spin -DLTL_ONLY -a transfer.pml && gcc -O2 -DNFAIR=3 -o pan pan.c
 *     ./pan -a    -m100000 -N p1_at_most_one_execution      (likewise p2, p3, p5)
 *     ./pan -a -f -m100000 -N p4_eventually_terminal        (weak fairness)
 *   a mutant: add -DMUTANT_NO_FENCE_VERSION (etc.) to the spin -a line;
 *   read a counterexample: spin [-DMUTANT_...] [-DLTL_ONLY] -t -p -g transfer.pml
 *   larger bounds: spin -DFAULTS=3 -DPAUSES=3 -a transfer.pml ...
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
 *                                                                 lease_expires_at=now()+lease
 *                                                               WHERE id=$1 AND status=$expected
 *                                                                 AND version=$expectedVersion     (*)
 *                                                               RETURNING provider_reference, version
 *       no row -> release the lock, stop, never call the provider
 *     lease check                TransferProcessor#send         (local) lease_expires_at - now()
 *                                                                 >= provider timeout + margin, else abort
 *       ok    -> in_flight = 1: from here until the send resolved the lease
 *                cannot expire (time assumption below)
 *       abort -> release the lock, stop (the sweeper expires the lease; the Java code
 *                makes that same processing(v) -> reconciling(v+1) move itself with the
 *                fenced UPDATE, which is one of the behaviours modelled here)
 * (3) send   (one atomic step)   ProviderClient#send(reference) POST payment, Idempotency-Key=reference
 *       completed                executions++                  -> fence sent
 *       rejected (definitive)    not executed                  -> fence failed
 *       5xx before execute       not executed, UNKNOWN         -> fence reconciling   (uses FAULTS)
 *       executed, then timeout   executions++, UNKNOWN         -> fence reconciling   (uses FAULTS)
 * (4) fence  (one atomic step)   TransferRepository#fence       UPDATE transfers SET status=$s,
 *                                                                 version=version+1, ...
 *                                                               WHERE id=$1 AND version=$claimed
 *       zero rows -> stale worker: stale_fences++, change nothing
 * (5) release                    RedisLock#release              EVAL "if GET(key)==token then DEL" (never DEL)
 *
 * Sweeper                        pipeline.Sweeper (one scheduled instance)
 *   dispatch                     Sweeper#dispatchPending        pending row -> process(id) with
 *                                                                 expected (pending, 0)
 *   expire (SELECT, then UPDATE) Sweeper#expireLeases,          UPDATE transfers SET status='reconciling',
 *                                TransferRepository#expireLease   version=version+1 WHERE id=$1
 *                                                                 AND status='processing'
 *                                                                 AND lease_expires_at < now() AND version=$v
 *   reconcile (row at version v) Sweeper#reconcile,
 *                                ProviderClient#lookup(reference)
 *       completed  -> fence(v, sent)                            (same fenced UPDATE, version=$v)
 *       rejected   -> fence(v, failed)
 *       not found  -> process(id) with expected (reconciling, v): lock, claim, send again with
 *                     the same reference, fence
 *       lookup error -> back off, retry later                   (uses FAULTS)
 *
 * Environment
 *   LeaseClock                   DB now() passing lease_expires_at for the current claim.
 *   lock ttl                     folded into acquire ("OK" although held = the holder's PX ttl
 *                                ran out, e.g. it paused past the TTL or Redis restarted).
 *   crash                        an instance killed right after its claim or right after the
 *                                send resolved: it never resumes; its lease then always expires.
 *
 * (*) FINDING.  DESIGN.md §5 step 2 claims with
 *       WHERE id=$1 AND status IN ('pending','reconciling')
 *     That is unsafe: a process(id) call started for the PENDING row (the
 *     second dispatch) can run its claim after the first worker's send
 *     executed-then-timed-out and was fenced to 'reconciling'; the claim
 *     matches the reconciling row and the worker sends again without a lookup
 *     -> two executions at a non-idempotent provider.  The model checks the
 *     fixed claim: the caller passes the status AND version it observed
 *     (pending/0 for a dispatch, reconciling/v for the reconciler after its
 *     lookup said "not found"); TransferRepository.CLAIM implements exactly that
 *     (TransferRepository.Seen).  The DESIGN claim is kept as the mutant
 *     MUTANT_CLAIM_WITHOUT_EXPECTED_VERSION, which violates P1, P3 and P5.
 *
 * ---------------------------------------------------------------------------
 * PROPERTIES
 *   P1  at most one execution at the provider        assert at each send + ltl p1_at_most_one_execution
 *   P2  no write after a terminal status (sent/failed: status and version never change)
 *                                                    assert in every UPDATE + ltl p2_no_write_after_terminal
 *   P3  every successful UPDATE comes from the holder of the current version: the writer's
 *       version (claim's RETURNING version for a fence, the version read for expire/reconcile,
 *       the version observed before a claim) equals the row's version at that moment
 *                                                    assert in every UPDATE + ltl p3_no_stale_write
 *   P4  provider eventually healthy + weak fairness => <> (status==sent || status==failed)
 *                                                    ltl p4_eventually_terminal, pan -a -f
 *   P5  sent => executions == 1, failed => executions == 0
 *                                                    assert when the sweeper ends + ltl p5_outcome_matches_provider
 *   safety run also reports invalid end states: every process blocked while the row is not
 *   terminal would be a transfer stuck forever.
 *
 *   witnesses (must be VIOLATED, i.e. reachable, so the checks are not vacuous):
 *     w1_stale_fence_reachable    a stale worker's fence matches zero rows
 *     w2_killed_worker_recovered  Worker1 is killed after its claim/send, the transfer still ends
 *
 * MUTANTS (spin -D...)              what changes                      counterexample for
 *   MUTANT_NO_FENCE_VERSION                (a) fence WHERE id=$1             P2, P3
 *   MUTANT_NO_CLAIM_STATUS                 (b) claim WHERE id=$1             P1, P2, P3, P5
 *   MUTANT_RESEND_WITHOUT_LOOKUP           (c) reconcile re-claims and
 *                                              resends without a lookup      P1, P5
 *   MUTANT_CLAIM_WITHOUT_EXPECTED_VERSION  DESIGN §5 claim, see (*)          P1, P3, P5
 *   MUTANT_NO_LEASE_CHECK                  send without the lease check      P1, P5
 *   MUTANT_NO_EXPIRE_LEASES                sweeper never expires leases      P4 (and an invalid
 *                                                                            end state: stuck)
 *   ("counterexample for" = the ltl blocks that fail, each run on its own; the
 *   other ltl blocks hold for that mutant or were not run by the test.)
 *
 * ---------------------------------------------------------------------------
 * ASSUMPTIONS
 *   A1 Time.  The lease is longer than the provider timeout + margin (checked at
 *      start-up) and TransferProcessor#send aborts unless the lease still covers a
 *      full provider timeout.  Every send also carries its deadline (header
 *      Ledgerline-Not-After = lease end - margin) and the provider refuses, without
 *      executing, a send that arrives later (SandboxLedger#send).  Hence a send is
 *      executed only while the sender's DB lease is unexpired: LeaseClock cannot expire a lease while its
 *      holder is between "lease checked" and "send resolved" (in_flight).  The
 *      holder may pause for any time after the claim (before the lease check) and
 *      after the send resolved (before the fence); its lease may expire then.
 *   A2 Leases expire in claim order (one DB clock, fixed lease length), so a
 *      lease is summarised by the version its claim produced.
 *   A3 The provider is honest and non-idempotent: every executed send counts,
 *      lookup(reference) reports the truth (completed if any send executed,
 *      rejected if a send was rejected and none executed, else not found) and an
 *      execution happens before the client sees its outcome.
 *   A4 "Eventually healthy": FAULTS bounds 5xx / executed-then-timeout / lookup
 *      errors, PAUSES bounds lease expiries of a live holder (pauses past the
 *      lease).  Rejections, Redis outages, lock takeovers and crashes are
 *      unbounded (crashes: each worker at most once; it never resumes).
 *   A5 Each UPDATE is one atomic step (single-row statement); the sweeper's
 *      SELECT and its UPDATE are separate steps.
 *   A6 Redis may be unavailable at any acquire (then the claim goes straight to
 *      PostgreSQL) and a lock may be lost/expire at any time.  Modelled as the
 *      nondeterministic result of each acquire; a release while Redis is down
 *      and the key of a killed worker are treated as expired at once (the
 *      lock only ever prunes behaviour, so earlier expiry adds behaviours).
 *      No property depends on the lock: every path that skips it is included.
 *
 * NOT COVERED
 *   - A process pause (GC, SIGSTOP, VM freeze) INSIDE the in-flight window, or a
 *     request that is delayed in the network past its lease, is folded into A1:
 *     it is safe only because the provider refuses a send past its
 *     Ledgerline-Not-After deadline (the fault suite's paused-instance scenario
 *     exercises exactly this) or, with a provider that ignores the deadline,
 *     because it honours the Idempotency-Key (provider_reference) — neither of
 *     which the model itself checks.
 *   - A dishonest / inconsistent provider (lookup lagging behind an execution,
 *     lost payments, a rejection after an execution of the same reference).
 *   - Redis clock behaviour and TTL precision: the lock may expire at any time
 *     here, so Redis time is irrelevant; skew between the worker's clock and the
 *     database's now() beyond the configured margin is not covered.
 *   - Several sweeper instances (FOR UPDATE SKIP LOCKED); the fixed claim
 *     (status + version) is what makes concurrent reconcilers safe, argued, not
 *     checked.  More than two workers, more than one transfer.
 *   - Timing/backoff values, attempts/next_attempt_at, transfer_events rows,
 *     the HTTP layer and idempotency keys of the API.
 *   - Bounds: FAULTS=2, PAUSES=2 by default (override with -D).
 */

/* ======================================================================== */
/*  Bounds (override with spin -DFAULTS=3 -DPAUSES=3 ...)                    */
/* ======================================================================== */
#ifndef FAULTS
#define FAULTS 2   /* provider misbehaviour budget: 5xx-before-execute,
                      executed-then-timeout, lookup error (shared budget)   */
#endif
#ifndef PAUSES
#define PAUSES 2   /* lease expiries while the holder is still alive        */
#endif

/* assertions are the -DSAFETY run's checks; the LTL runs are built with
   -DLTL_ONLY so that each never claim is judged on its own                  */
#ifdef LTL_ONLY
#define ASSERT(c) skip
#else
#define ASSERT(c) assert(c)
#endif

/* actors (also the lock token and the claimed_by value) */
#define NOBODY  0
#define W1      1
#define W2      2
#define SWEEPER 3

mtype = { PENDING, PROCESSING, SENT, FAILED, RECONCILING,   /* transfers.status */
          COMPLETED, REJECTED, UNKNOWN };                    /* send outcome     */

#define TERMINAL (status == SENT || status == FAILED)

/* ---- the transfers row (PostgreSQL) ------------------------------------ */
mtype status  = PENDING;
byte  version = 0;
byte  claimed_by = NOBODY;
/* lease_expires_at, abstracted: the lease taken by the claim that produced
   version c has expired  <=>  c <= leases_expired_upto.  Leases expire in
   claim order (same length, later claim => later expiry).                  */
byte  leases_expired_upto = 0;

/* ---- Redis ---------------------------------------------------------------- */
byte  lock_owner = NOBODY;          /* value of lock:transfer:{id}, 0 = absent */

/* ---- provider (non-idempotent, honest) ------------------------------------ */
byte  executions    = 0;            /* every executed send counts             */
bit   prov_rejected = 0;            /* some send was definitively rejected    */

/* ---- environment budgets / time assumption -------------------------------- */
byte  faults = FAULTS;
byte  pauses = PAUSES;
bit   in_flight = 0;                /* a sender is between lease check and
                                       send resolved: its lease cannot expire */
bit   crashed[4];                   /* instance killed (worker never resumes) */

/* ---- ghosts / observability ----------------------------------------------- */
byte  stale_fences = 0;             /* fence matched zero rows (counted)       */
bit   p2_write_after_terminal = 0;  /* some UPDATE hit a sent/failed row      */
bit   p3_stale_write = 0;           /* some UPDATE by a writer whose version
                                       is not the row's current version      */

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
/* (b) WHERE id=$1                                                          */
#define CLAIM_WHERE(exp_s, exp_v) (true)
#elif defined(MUTANT_CLAIM_WITHOUT_EXPECTED_VERSION)
/* DESIGN.md §5 step 2 verbatim: WHERE id=$1 AND status IN ('pending','reconciling') */
#define CLAIM_WHERE(exp_s, exp_v) (status == PENDING || status == RECONCILING)
#else
/* correct: WHERE id=$1 AND status=$expected AND version=$expectedVersion    */
#define CLAIM_WHERE(exp_s, exp_v) (status == exp_s && version == exp_v)
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
         status = new_status; version++
    :: else ->
         stale_fences++
    fi
  }
}

inline release_if_mine(me) {
  atomic { if :: lock_owner == me -> lock_owner = NOBODY :: else -> skip fi }
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

  /* (2) TransferRepository#claim: UPDATE transfers SET status='processing',
         version=version+1, claimed_by=$2, lease_expires_at=now()+lease
         WHERE <CLAIM_WHERE> RETURNING provider_reference, version           */
  atomic {
    if
    :: CLAIM_WHERE(exp_s, exp_v) ->
         write_check(exp_v);
         status = PROCESSING; version++; claimed_by = me; my_ver = version
    :: else -> my_ver = 0                      /* no row: never call provider */
    fi
  };
  if :: my_ver == 0 -> goto pl_release :: else -> skip fi;

  /* pause point: the worker may stall here for any time (its lease and its
     Redis lock may expire meanwhile) -- or the instance may be killed       */
  if :: me != SWEEPER -> crashed[me] = 1; release_if_mine(me); goto pl_end :: skip fi;

#ifndef MUTANT_NO_LEASE_CHECK
  /* TransferProcessor#send: lease must still cover a full provider timeout */
  if
  :: atomic { my_ver > leases_expired_upto -> in_flight = 1 }
  :: atomic { my_ver <= leases_expired_upto } -> goto pl_release    /* abort */
  fi;
#endif

  /* (3) ProviderClient#send(provider_reference, ...) -- non-idempotent     */
  atomic {
    if
    :: executions++;   outcome = COMPLETED           /* executed, 2xx       */
    :: prov_rejected = 1; outcome = REJECTED         /* definitive, not exec */
    :: faults > 0 -> faults--;                       /* 5xx before execute   */
                     outcome = UNKNOWN
    :: faults > 0 -> faults--; executions++;         /* executed, timeout    */
                     outcome = UNKNOWN
    fi;
    in_flight = 0;
    ASSERT(executions <= 1)                          /* P1 */
  };

  /* pause point after the send resolved (lease may expire) / crash point   */
  if :: me != SWEEPER -> crashed[me] = 1; release_if_mine(me); goto pl_end :: skip fi;

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
    my_ver = 0; outcome = 0             /* forget locals        */
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
  byte  my_ver;
  mtype outcome;
  process_transfer(W1, PENDING, 0)
}

active proctype Worker2() {
  byte  my_ver;
  mtype outcome;
  process_transfer(W2, PENDING, 0)
}

/* ======================================================================== */
/*  pipeline.Sweeper (dispatchPending / expireLeases / reconcile)            */
/* ======================================================================== */
active proctype Sweeper() {
  byte  my_ver, v;
  mtype outcome, exp_s;

sw_loop:
  if
  :: TERMINAL -> goto sw_done

  /* Sweeper#dispatchPending: a pending row -> run the worker pipeline      */
  :: atomic { status == PENDING -> exp_s = PENDING; v = version } -> goto sw_pipeline

  /* Sweeper#expireLeases: SELECT a processing row whose lease expired, then
     TransferRepository#expireLease: UPDATE ... SET status='reconciling',
     version=version+1 WHERE id=$1 AND status='processing'
     AND lease_expires_at < now() AND version=$v                            */
#ifndef MUTANT_NO_EXPIRE_LEASES
  :: atomic { status == PROCESSING && version <= leases_expired_upto -> v = version } ->
       atomic {
         if
         :: status == PROCESSING && version == v && version <= leases_expired_upto ->
              write_check(v);
              status = RECONCILING; version++
         :: else -> skip
         fi;
         v = 0
       };
       goto sw_loop
#endif

  /* Sweeper#reconcile: a reconciling row at version v                      */
  :: atomic { status == RECONCILING -> v = version } ->
#ifdef MUTANT_RESEND_WITHOUT_LOOKUP
       exp_s = RECONCILING; goto sw_pipeline       /* (c) blind resend      */
#else
       /* ProviderClient#lookup(reference): reports the truth               */
       if
       :: atomic { faults > 0 -> faults--; v = 0 } -> goto sw_loop   /* lookup error: back off */
       :: executions > 0 -> fence(v, SENT); v = 0; goto sw_loop     /* completed */
       :: executions == 0 && prov_rejected ->
            fence(v, FAILED); v = 0; goto sw_loop                   /* rejected  */
       :: executions == 0 && !prov_rejected ->
            exp_s = RECONCILING; goto sw_pipeline                   /* not found */
       fi
#endif
  fi;

sw_pipeline:
  process_transfer(SWEEPER, exp_s, v);
  atomic { exp_s = 0; v = 0 };
  goto sw_loop;

sw_done:
  /* at the end: sent => exactly one execution; failed => none              */
  ASSERT(status != SENT   || executions == 1);
  ASSERT(status != FAILED || executions == 0)
}

/* ======================================================================== */
/*  Environment                                                               */
/* ======================================================================== */

/* Time / DB lease.  The lease of the current claim may expire unless its
   holder is in flight (time assumption).  Expiring the lease of a holder that
   is still alive (= it paused past its lease) uses the PAUSES budget; the
   lease of a killed holder always expires eventually.                       */
active proctype LeaseClock() {
end_clock:
  do
  :: atomic { status == PROCESSING && !in_flight && version > leases_expired_upto &&
              (crashed[claimed_by] || pauses > 0) ->
                if :: crashed[claimed_by] -> skip :: else -> pauses-- fi;
                leases_expired_upto = version }
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
   vacuous): a stale worker is fenced off, and a transfer whose worker was
   killed after its claim/send is still finished (by the sweeper).            */
ltl w1_stale_fence_reachable   { [] (stale_fences == 0) }
ltl w2_killed_worker_recovered { [] !(crashed[W1] && (status == SENT || status == FAILED)) }
