/*
 * transfer.pml -- Promela model of the Ledgerline Transfers pipeline
 *                 (docs/safety.md "How a transfer moves": lock -> claim -> send ->
 *                 fence -> release, plus the sweeper / reconciler), for ONE
 *                 transfer row, with the send split into dispatch, effect and
 *                 resolution so that a request can outlive its caller.
 *
 * Checked by src/test/java/dev/ledgerline/model/ProtocolModelTest.java (this module's test).
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
 *   the three fault models (see FAULT MODELS below), each on its own, as
 *   ProtocolModelTest runs them (one dispatch worker beside the sweeper):
 *     spin -DLOST_COMMIT           -DONE_WORKER -DFAULTS=1 -DPAUSES=1 -a transfer.pml
 *     spin -DPROVIDER_CLOCK_BEHIND -DONE_WORKER -DFAULTS=1 -DPAUSES=1 -a transfer.pml
 *     spin -DKEY_EXPIRY            -DONE_WORKER -DFAULTS=1 -DPAUSES=1 -a transfer.pml
 *   the owner's cancel (a Canceller process, see THE OWNER'S CANCEL below):
 *     spin -DCANCEL -DONE_WORKER -a transfer.pml          (its mutant: -DMUTANT_CANCEL_WITHOUT_CHECK)
 *   the claim taken by the accept's INSERT (-DCLAIM_ON_INSERT, with LOST_COMMIT as ProtocolModelTest runs it):
 *     Worker1 is the accept's first pass, and its claim is the first step on the row: the sweeper, a second
 *     worker and the owner's cancel wait for it (`inserted`). The INSERT writes the row already claimed, so no
 *     one can act on it between the two; the claim's epoch rule is the statement's (not adopted: no claim, the
 *     row stays pending). A lost commit still reverts the claim to a pending row here, where the real loss also
 *     takes the INSERT with it: the model keeps the larger set of outcomes.
 *     spin -DLOST_COMMIT -DCLAIM_ON_INSERT -DONE_WORKER -DFAULTS=1 -DPAUSES=1 -a transfer.pml
 *   (without any of them the generated verifier is the one before they existed:
 *    same states, same transitions)
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
 * (3a) dispatch                  provider.ProviderHttp#send     once the request has its connection, the
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
 *   reconcile                    Reconciler#reconcile, ProviderClient#lookup(reference)
 *       completed  -> fence(v, sent)                            (same fenced UPDATE, version=$v)
 *       rejected   -> fence(v, failed)
 *       not found  -> process(id) with expected (reconciling, v): lock, claim, send again with
 *                     the same reference, fence
 *       lookup error -> back off, retry later                   (uses FAULTS)
 *   settle = margin + ledgerline provider lookup-lag bound
 *            (+ ledgerline.pipeline.clock-skew-bound, PROVIDER_CLOCK_BEHIND).
 *
 * Added by the fault models (each only under its -D; see FAULT MODELS):
 * LOST_COMMIT
 *   claim: + claim token          TransferRepository#claim       SET claim_token = gen_random_uuid()
 *                                                                 (RETURNING claim_token): row_tok = a
 *                                                                 number no other claim or take has
 *   claim: + epoch                                               AND EXISTS (SELECT 1 FROM database_epochs
 *                                                                 WHERE started_at=pg_postmaster_start_time())
 *                                                                 (epoch_ok)
 *   fence: + claim token          TransferRepository#fence       WHERE t.id=f.id AND t.version=f.version
 *                                  (FenceQueue), #park             AND t.claim_token=f.claim_token;
 *                                                                 SET claim_token=NULL
 *   take:  + claim token          TransferRepository#takeReconciling  SET claim_token=gen_random_uuid();
 *                                  Reconciler#settle, #park         the settle/park after the lookup match it
 *   expire: clears the token      TransferRepository#expireLeases (lease expiry writes a new version)
 *   ADOPT_EPOCH (Failover proc)   Sweeper#adoptEpoch (every round, TransferRepository ADOPT_EPOCH: INSERT INTO
 *                                  any instance)                   database_epochs the current start time;
 *                                                                 if new, every pending/reconciling row ->
 *                                                                 reconciling, version+1, claim_token=NULL,
 *                                                                 send_not_after=greatest(send_not_after,
 *                                                                   now()+send window)  (row_claim = claims)
 *   unseen retry (Failover proc)  IdempotencyService#insertOrFind  Redis did not answer and the key has no
 *                                  (unseen)                        row: TransferSql INSERT_LOOKUP_FIRST, the
 *                                                                 derived provider_reference, 'reconciling',
 *                                                                 send_not_after = greatest(now(), adoption
 *                                                                   + send window) (the server changed)
 *   re-create (Failover proc)     IdempotencyService#recreate    the Redis entry names a row that is gone:
 *                                  (the cache_stale path)          TransferRepository INSERT_RECOVERED, same
 *                                                                 id, same derived provider_reference
 *                                                                 (IdempotencyService#providerReference, an HMAC),
 *                                                                 status 'reconciling', version 0,
 *                                                                 send_not_after = now()+send window
 *   loss (Failover proc)          the environment                a failover to an asynchronous replica, a
 *                                                                 crash with synchronous_commit=off, a restore
 * PROVIDER_CLOCK_BEHIND
 *   claim: + hold                 TransferProcessor#claimSendFence  ClockWatch#holdingSends(): no claim while
 *                                  (and Sweeper's dispatch)         |offset| > clock-skew-bound (skew_over);
 *                                                                 ledgerline_clock_offset_seconds{peer=...}
 *   settle includes the bound     ledgerline.pipeline.clock-skew-bound in the settle time (claim, take,
 *                                                                 fence's next_attempt_at, expire)
 *   provider deadline (Clock)     the provider checks Ledgerline-Not-After on its own clock (pdl_upto)
 * KEY_EXPIRY
 *   claim: + key window           TransferRepository#claim       SET first_sent_at=coalesce(first_sent_at,
 *                                                                 now()) ... AND (first_sent_at IS NULL OR
 *                                                                 first_sent_at + (key-window - margin)
 *                                                                 > now())            (!age_passed)
 *   park (Sweeper, not found)     Reconciler#resend -> #parkReason  "provider key window passed ...: money may
 *                                  -> #park                        have moved": TransferRepository PARK,
 *                                                                 version+1, next_attempt_at='infinity'
 *                                                                 WHERE version=$v AND claim_token=$t
 *   key expiry (Clock)            ledgerline.provider.key-window, key-window-margin (StartupChecks: window
 *                                                                 > margin + provider timeout)
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
 *     (Seen); the old claim is MUTANT_CLAIM_WITHOUT_EXPECTED_VERSION.
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
 * FAULT MODELS (each behind its -D; the model without them is unchanged)
 *
 * LOST_COMMIT -- PostgreSQL loses its last acknowledged commits.  A Failover
 *   process may, once (LOSSES), (a) lose the latest claim: the row is back as
 *   it was before it (pending v0 with send_not_after NULL, or reconciling at
 *   the version the reconciler took), while the claim's holder goes on and its
 *   request can execute until its deadline D_k (which it carries); or (b) lose
 *   the INSERT and everything after it (the row is gone after it was sent).
 *   Then the epoch changed: ADOPT_EPOCH may run at any moment after it (any
 *   instance's sweeper round), and the client retries the POST with the same
 *   key, which re-creates the row from its Redis entry.  Versions can be issued
 *   twice now, so P3 compares the write the writer holds (ghost row_gen: a
 *   number per successful write, the loss restores the old one), and leases
 *   are counted by claim number.  The fixed rules (claim token in every fence,
 *   claim requires the adopted epoch, ADOPT_EPOCH moves open rows to
 *   reconciling with send_not_after pushed past every claim so far, a lost row
 *   is re-created reconciling with the same reference and that deadline) keep
 *   P1-P5.  Each mutant takes away one of them; today's code had none:
 *     MUTANT_FENCE_WITHOUT_TOKEN  the fence matches the version alone: the lost
 *         claim's holder fences v1 after ADOPT_EPOCH reissued v1 (trail, 30 steps):
 *           [3] claim k=1 -> v1; database loses claim k=1: back at PENDING v0;
 *           epoch adopted: -> reconciling v1; ... fence v1 (token #2) lands on a
 *           row it does not hold: v1 written by #3                         P3
 *         (with no epoch rule either, as today, the fence lands on claim 2's v1)
 *     MUTANT_NO_EPOCH  no EXISTS in the claim, no ADOPT_EPOCH: after the loss
 *         the row is pending v0 with no deadline, claimed and sent again while
 *         or after the lost claim's request executes: two executions      P1
 *     MUTANT_CLAIM_WITHOUT_EPOCH  ADOPT_EPOCH runs, but the claim does not wait
 *         for it: a claim between the loss and the adoption sends again   P1
 *     MUTANT_ADOPT_WITHOUT_WINDOW  ADOPT_EPOCH does not push send_not_after: the
 *         reconciler looks up before the lost claim's request settled     P1
 *     MUTANT_RECREATE_FRESH  today's cache_stale path: a new row, new random
 *         id and reference, pending; sent at once: two executions         P1
 *     MUTANT_RECREATE_PENDING  same id and derived reference, but pending: the
 *         provider here is not idempotent, so the resend executes again; the
 *         derived reference helps only behind a lookup                   P1
 *     MUTANT_RECREATE_WITHOUT_WINDOW  reconciling, send_not_after NULL: looked
 *         up before the earlier execution shows (or before a request still in
 *         flight executes)                                              P1
 *     MUTANT_UNSEEN_PENDING  the retry's Redis read does not answer, so nothing
 *         names the lost row, and the key's row is inserted pending, as any
 *         new one: sent again at once                                   P1
 *
 * PROVIDER_CLOCK_BEHIND -- the provider's clock is behind PostgreSQL's.  Its
 *   deadline check is its own event: D_k passes on the provider's clock at or
 *   after it passed on the DB clock (pdl_upto <= dl_upto); the provider applies
 *   request k until then.  ClockWatch's measured offset may cross the bound and
 *   back (SKEWS).  Fixed (D6): settle = margin + lag + clock-skew-bound, so for a
 *   claim made while the offset was within the bound, "D_k + settle passed"
 *   comes after the provider's D_k; and no claim is made while the offset is
 *   beyond the bound (hold).  The offset is taken to change slowly against one
 *   send window: a claim made within the bound keeps that bound until its D_k.
 *     MUTANT_NO_SKEW_BOUND  settle = margin + lag: the provider's D_k may come
 *         after settle for any claim (the skew bound is what covers it)   P1
 *     MUTANT_NO_SKEW_HOLD   claims go on while the offset exceeds the bound:
 *         such a claim's provider D_k may come after its settle           P1
 *     today = both (ProtocolModelTest runs today's and MUTANT_NO_SKEW_HOLD alone;
 *         MUTANT_NO_SKEW_BOUND alone is today's in this abstraction).  Today's
 *         trail (96 steps): D_2 passes, D_2 + settle passes, the provider
 *         executes k=2 before its own D_2, the lookup says not found, k=3
 *         is claimed and executes                                       P1
 *
 * KEY_EXPIRY -- the provider is key-idempotent (a request whose reference's key
 *   it keeps is answered with the key's saved result and executes nothing) but
 *   forgets a key: after first_sent_at + window - margin passed (age_passed),
 *   and only once every request claimed before that passed its deadline (the
 *   margin covers one provider timeout: StartupChecks).  A lookup may miss an
 *   execution (uses FAULTS): against this provider that is harmless while it
 *   keeps the key.  Fixed (D7): the claim refuses a row whose first send is
 *   older than window - margin, and the reconciler parks it after "not found"
 *   (PARKED, a reconciling row with next_attempt_at 'infinity').
 *     MUTANT_NO_KEY_WINDOW  resends have no age limit: the key is forgotten,
 *         a lookup misses the payment, the resend executes again          P1
 *
 * ---------------------------------------------------------------------------
 * THE OWNER'S CANCEL (-DCANCEL)
 *   Canceller                     service.TransferService#cancel  reads the row (findById); not pending ->
 *                                                                 answered without a write (200 cancelled,
 *                                                                 409 otherwise)
 *   cancel (one atomic step)      TransferRepository#cancel       UPDATE transfers SET status='cancelled',
 *                                                                 version=version+1 WHERE id=$1
 *                                                                 AND version=$seen AND status='pending'
 *                                                                 AND EXISTS (database_epochs ...)
 *   The read and the UPDATE are separate steps, so a claim (Worker1's, or the sweeper's dispatch) can come
 *   between them; the UPDATE then matches no row (409).  cancelled is terminal (TERMINAL, P2, P4) and the
 *   claim's status=$expected never matches it.  Checked with one dispatch worker beside the sweeper
 *   (-DONE_WORKER): with two, the state space is ten times larger for the same race.
 *     P6  a cancelled transfer has no execution     assert at the cancel and at every effect, and at the
 *                                                    sweeper's end + ltl p6_cancelled_never_executed
 *     w9_cancel_wins / w10_cancel_loses_race         both sides of the race are reachable
 *     MUTANT_CANCEL_WITHOUT_CHECK  the UPDATE by id alone: it lands after a claim (P3, the assertion run's
 *         first stop), on a transfer whose request executes (P6), or on a sent row (P2)
 *   The schedule (execute_at, the claim waits for it) is not modelled: it only delays when a claim may
 *   first match, which the model already leaves open (any claim may come at any moment).  The epoch
 *   condition of the cancel is modelled (LOST_COMMIT), but CANCEL and LOST_COMMIT are not run together.
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
 *   L1  the ledger's hold (V12) is resolved at most once, posted exactly for sent and released
 *       exactly for failed or cancelled; reconciling keeps it       assert at each resolution
 *                                                    + ltl l1_hold_follows_status
 *       MUTANT_POST_ON_STALE_FENCE    a fence that matches no row resolves the hold anyway      L1
 *       MUTANT_RELEASE_WHILE_UNKNOWN  the fence to reconciling releases the hold               L1
 *       A row the database lost and re-created holds nothing (hold = NOHOLD): the model records
 *       the service's gap (docs/safety.md "Money the customer has") instead of asserting over it.
 *   safety run also reports invalid end states: every process blocked while the row is not
 *   terminal would be a transfer stuck forever.
 *
 *   witnesses (must be VIOLATED, i.e. reachable, so the checks are not vacuous):
 *     w1_stale_fence_reachable    a stale worker's fence matches zero rows
 *     w2_killed_worker_recovered  Worker1 is killed after its claim/send, the transfer still ends
 *     w3_effect_after_give_up     a request executes after its caller resolved it as unknown
 *                                 (or died) -- the in-transit case itself
 *     w4_lost_claim_executes      LOST_COMMIT: a request whose claim the database lost executes
 *                                 after the loss
 *     w5_recreated_row_sent       LOST_COMMIT: a row lost after its payment executed is
 *                                 re-created and ends sent (its lookup found the payment)
 *     w6_executes_after_db_deadline  PROVIDER_CLOCK_BEHIND: the provider executes a request after
 *                                 its deadline passed on the DB clock
 *     w7_resend_answered_by_key   KEY_EXPIRY: the provider answers a resend from its key
 *     w8_parked                   KEY_EXPIRY: a transfer is parked (key window passed)
 *   KEY_EXPIRY replaces P4 by p4_finished_or_parked: <> (sent || failed || parked) -- a parked
 *   transfer waits for an operator on purpose.
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
 *       (a lease ends after D + margin, so a send past its lease is refused by ProviderHttp or
 *        the provider; the lease check only spares a doomed request.  ProtocolModelTest asserts
 *        that P1 and P5 HOLD for it, so the claim "the deadline, not the lease check, fences the
 *        send" is itself checked.)
 *   the fault models' mutants: see FAULT MODELS above.
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
 *   A7 (LOST_COMMIT) At most LOSSES losses, each of the latest claim or of the
 *      INSERT, never of a sent/failed row; the epoch changes with every loss
 *      (a restart, crash, promotion or restore changes pg_postmaster_start_time()).
 *      Redis keeps its entries.  The send window (ADOPT_EPOCH's and the
 *      re-created row's push) is at least the provider timeout, so "now() +
 *      window" is past the deadline of every claim made so far (row_claim = claims).
 *   A8 (PROVIDER_CLOCK_BEHIND) replaces A1 for the provider: its clock may be
 *      behind by up to the skew bound while ClockWatch measures the offset within
 *      it, by any amount otherwise; the DB and JVM clocks still agree.
 *   A9 (KEY_EXPIRY) The provider keeps a key from the first request's arrival
 *      (after first_sent_at) for the whole key window.
 *
 * NOT COVERED
 *   - A provider that ignores Ledgerline-Not-After (MUTANT_PROVIDER_IGNORES_DEADLINE
 *     shows the double execution); then only its Idempotency-Key handling
 *     (provider_reference) protects the payment, which the model does not check.
 *     ProviderHttp's deadline check is not load-bearing here for the same reason: the
 *     provider refuses what the check would have held back.
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
 *     <= 10); at most MAXK-1 = FAULTS + PAUSES + 2 claims (asserted; + LOSSES
 *     with LOST_COMMIT).
 *   - The fault models are checked one at a time, not combined, and with one
 *     dispatch worker (-DONE_WORKER: the second claimer of the pending row is
 *     the sweeper's dispatchPending) and FAULTS=1, PAUSES=1, so that they fit
 *     the test's time budget (LOST_COMMIT with two workers: 4.4 million states).
 *   - LOST_COMMIT: a lost fence alone (the row back at processing with the
 *     claim's lease: lease expiry and a lookup, as for a killed worker); more
 *     than one loss; the take's fresh claim_token is the same for every take of
 *     one reconciling row (one reconciler here, so no earlier take of it is
 *     still held).  A lost claim also loses first_sent_at (KEY_EXPIRY not
 *     combined with it): the re-claim then starts the key window late.
 *   - PROVIDER_CLOCK_BEHIND: a clock that steps by more than the bound while a
 *     send claimed within it is in flight; the hold is checked in Java just
 *     before the claim, here in the claim's own step.  A provider clock ahead
 *     only refuses early (412): no double execution, not modelled.
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
#ifdef LOST_COMMIT
#ifndef LOSSES
#define LOSSES 1   /* failovers / crashes that lose acknowledged commits     */
#endif
/* ... and one more after each loss (the lost claim's or INSERT's re-claim)  */
#define MAXK (FAULTS + PAUSES + 3 + LOSSES)
#else
#define MAXK (FAULTS + PAUSES + 3)
#endif
#ifdef PROVIDER_CLOCK_BEHIND
#ifndef SKEWS
#define SKEWS 2    /* times the measured offset crosses the skew bound       */
#endif
#endif

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
#ifdef LOST_COMMIT
mtype = { ABSENT };       /* no row: the database lost the INSERT            */
#endif
#ifdef KEY_EXPIRY
mtype = { PARKED };       /* reconciling, next_attempt_at = 'infinity'       */
#endif
#ifdef CANCEL
mtype = { CANCELLED };    /* the owner cancelled it while pending: terminal  */
#define TERMINAL (status == SENT || status == FAILED || status == CANCELLED)
#else
#define TERMINAL (status == SENT || status == FAILED)
#endif
#define BIT(k)   (1 << (k))
#define HAS(m,k) (((m) >> (k)) & 1)

/* ---- the claim taken by the accept's INSERT (-DCLAIM_ON_INSERT) --------- */
#ifdef CLAIM_ON_INSERT
bit   inserted = 0;        /* Worker1's claim, the INSERT's, has been tried:
                              before it nothing else acts on the row        */
#define AFTER_INSERT inserted;
#else
#define AFTER_INSERT           /* nothing: the verifier without it is unchanged */
#endif

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

/* ---- the ledger (V12): the transfer's hold on its owner's account ----------
   HELD by the INSERT's statement; POSTED by the fence to sent, RELEASED by the
   fence to failed or the cancel, each in the statement of that transition
   (TransferSql.RESOLVE_HOLDS); NOHOLD: a row the database lost (its hold went
   with it) and the service re-created, which holds nothing.                   */
mtype = { HELD, POSTED, RELEASED, NOHOLD };
mtype hold = HELD;

/* ---- ghosts / observability ----------------------------------------------- */
byte  stale_fences = 0;             /* fence matched zero rows (counted)       */
bit   p2_write_after_terminal = 0;  /* some UPDATE hit a sent/failed row      */
bit   p3_stale_write = 0;           /* some UPDATE by a writer whose version
                                       is not the row's current version      */
bit   late_effect = 0;              /* a request executed after its caller
                                       gave up on it (witness w3)             */
#ifdef CANCEL
bit   p6_cancelled_executed = 0;    /* the row is cancelled and a request of it
                                       executed (before or after the cancel)  */
bit   cancel_lost = 0;              /* the owner read the row pending and a
                                       claim moved it before the cancel's
                                       UPDATE (witness w10)                    */
#endif

#ifdef LOST_COMMIT
/* ---- LOST_COMMIT: PostgreSQL forgets its last acknowledged commits -------- */
byte  row_tok = 0;        /* transfers.claim_token (0 = NULL).  A fresh token
                             is the number of the write that draws it, so no
                             two claims or takes ever share one (gen_random_uuid) */
byte  row_gen = 1;        /* ghost: number of the write that produced the row
                             as it is now (1 = the INSERT).  P3 compares the
                             writer's with it: a version number can be issued
                             twice once the database forgot a write, this cannot */
byte  gens    = 1;        /* ghost: writes so far                             */
bit   epoch_ok = 1;       /* database_epochs has a row for the current
                             pg_postmaster_start_time()                      */
byte  losses  = LOSSES;
/* the row as it was just before the latest claim (what a loss goes back to) */
mtype snap_status = PENDING;
byte  snap_version = 0;
byte  snap_claim = 0;
byte  snap_tok = 0;
byte  snap_gen = 1;
int   lost_m = 0;         /* ghost: bit k: the database forgot claim k        */
bit   lost_exec = 0;      /* ghost: a request whose claim was lost executed
                             after the loss (witness w4)                      */
bit   recreated_paid = 0; /* ghost: the row was re-created from its Redis entry
                             after its payment had executed (witness w5)      */
#ifdef MUTANT_RECREATE_FRESH
byte  row_ref = 1;        /* id and provider_reference: 1 the original,
                             2 the fresh random ones of a re-created row      */
int   ref2_m = 0;         /* bit k: request k carried reference 2             */
#endif
#endif

#ifdef PROVIDER_CLOCK_BEHIND
/* ---- PROVIDER_CLOCK_BEHIND: the provider checks Ledgerline-Not-After on its
        own clock, which is behind PostgreSQL's --------------------------------- */
byte  pdl_upto = 0;       /* the provider's clock passed D_k <=> k <= pdl_upto
                             (<= dl_upto: it passes D_k at or after the DB)    */
bit   skew_over = 0;      /* ClockWatch: |offset| > clock-skew-bound            */
byte  skews = SKEWS;
int   skewed_m = 0;       /* bit k: claim k was made while the offset exceeded
                             the bound (its provider deadline is unbounded)    */
bit   behind_exec = 0;    /* ghost: a request executed after its D passed on
                             the DB clock (witness w6)                         */
#endif

#ifdef KEY_EXPIRY
/* ---- KEY_EXPIRY: a key-idempotent provider that forgets keys --------------- */
bit   age_passed = 0;     /* first_sent_at < now() - (key-window - margin)     */
byte  age_k = 0;          /* claims made before the age limit passed           */
bit   key_gone = 0;       /* the provider forgot the reference's key           */
bit   replayed = 0;       /* ghost: the provider answered a resend with the
                             saved result of its key (witness w7)              */
#endif

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

/* ---- which lease a lease check looks at ------------------------------------
   Leases expire in claim order (A2).  Without lost commits a version is never
   issued twice, so the version stands for its claim; once the database can
   forget a claim it cannot, and the claim number is used.                    */
#ifdef LOST_COMMIT
#define ROW_LEASE row_claim     /* a processing row: the claim that wrote it  */
#define MY_LEASE  my_k
#else
#define ROW_LEASE version
#define MY_LEASE  my_ver
#endif

/* ---- P3: does the writer hold the row as it is now? ----------------------- */
#ifdef LOST_COMMIT
#define ANYGEN 255   /* a dispatch of the pending row: any pending v0 row of this id */
#define STALE(held, held_g) ((held) != version || ((held_g) != ANYGEN && (held_g) != row_gen))
#else
#define STALE(held, held_g) ((held) != version)
#endif

/* Every successful UPDATE goes through this.  `held` is the version the
   writer holds: RETURNING version of its claim (worker fence), the version it
   read (sweeper expire / reconcile), or the version it observed before
   dispatching the claim (0 for a pending row, v for reconciling@v).  With
   LOST_COMMIT `held_g` is the write it holds (its claim's or take's token,
   or the write it read).                                                    */
inline write_check(held, held_g) {
  if :: TERMINAL        -> p2_write_after_terminal = 1 :: else -> skip fi;
  if :: STALE(held, held_g) -> p3_stale_write = 1      :: else -> skip fi;
  ASSERT(!p2_write_after_terminal);   /* P2 */
  ASSERT(!p3_stale_write)             /* P3 */
}

/* ---- what else TransferRepository#claim requires -------------------------- */
#if defined(LOST_COMMIT) && !defined(MUTANT_NO_EPOCH) && !defined(MUTANT_CLAIM_WITHOUT_EPOCH)
/* AND EXISTS (SELECT 1 FROM database_epochs
               WHERE started_at = pg_postmaster_start_time())                */
#define CLAIM_EPOCH && epoch_ok
#else
#define CLAIM_EPOCH
#endif
#if defined(PROVIDER_CLOCK_BEHIND) && !defined(MUTANT_NO_SKEW_HOLD)
/* ClockWatch holds the claims while |offset| > clock-skew-bound             */
#define CLAIM_HOLD && !skew_over
#else
#define CLAIM_HOLD
#endif
#if defined(KEY_EXPIRY) && !defined(MUTANT_NO_KEY_WINDOW)
/* AND (first_sent_at IS NULL OR first_sent_at > now() - (key-window - margin)) */
#define CLAIM_AGE && !age_passed
#else
#define CLAIM_AGE
#endif
#define CLAIM_GUARDS CLAIM_EPOCH CLAIM_HOLD CLAIM_AGE
#ifdef MUTANT_RECREATE_FRESH
/* the workers were dispatched for the original id; a re-created row has a new one */
#define CLAIM_ID(me) && (me == SWEEPER || row_ref == 1)
#else
#define CLAIM_ID(me)
#endif

/* ---- TransferRepository#claim WHERE clause -------------------------------- */
#if defined(MUTANT_NO_CLAIM_STATUS)
/* (b) WHERE id=$1 (the send_not_after guard stays)                          */
#define CLAIM_WHERE(exp_s, exp_v) (SETTLED CLAIM_GUARDS)
#elif defined(MUTANT_CLAIM_WITHOUT_EXPECTED_VERSION)
/* first design: WHERE id=$1 AND status IN ('pending','reconciling')         */
#define CLAIM_WHERE(exp_s, exp_v) ((status == PENDING || status == RECONCILING) && SETTLED CLAIM_GUARDS)
#else
/* WHERE id=$1 AND status=$expected AND version=$expectedVersion
         AND (send_not_after IS NULL OR send_not_after + settle <= now())    */
#define CLAIM_WHERE(exp_s, exp_v) (status == exp_s && version == exp_v && SETTLED CLAIM_GUARDS)
#endif

/* ---- TransferRepository#fence WHERE clause -------------------------------- */
#if defined(MUTANT_NO_FENCE_VERSION)
#define FENCE_WHERE(held, held_g) (true)                 /* (a) WHERE id=$1    */
#elif defined(LOST_COMMIT) && !defined(MUTANT_FENCE_WITHOUT_TOKEN)
/* WHERE t.id = f.id AND t.version = f.version AND t.claim_token = f.claim_token */
#define FENCE_WHERE(held, held_g) (version == held && row_tok == held_g)
#else
#define FENCE_WHERE(held, held_g) (version == held)      /* WHERE id=$1 AND version=$v */
#endif

/* L1: a hold is resolved at most once, posted exactly for sent and released
   exactly for failed or cancelled; reconciling (an unknown outcome) keeps it.  */
inline resolve_hold(s) {
  if
  :: hold == NOHOLD -> skip
  :: else ->
       if
       :: s == SENT   -> ASSERT(hold == HELD); hold = POSTED
       :: s == FAILED -> ASSERT(hold == HELD); hold = RELEASED
#ifdef MUTANT_RELEASE_WHILE_UNKNOWN
       :: s == RECONCILING && hold == HELD -> hold = RELEASED   /* releases on an unknown outcome */
#endif
       :: else -> skip
       fi
  fi
}

/* TransferRepository#fence: UPDATE ... SET status=$s, version=version+1
   WHERE id=$1 AND version=$held  -- zero rows: stale, count it, change nothing.
   Also the reconciler's settle (fence after a lookup) and its park.          */
inline fence(held, held_g, new_status) {
  atomic {
    if
    :: FENCE_WHERE(held, held_g) ->
#ifdef LOST_COMMIT
         if
         :: STALE(held, held_g) ->
              printf("@ fence v%d (token #%d) lands on a row it does not hold: v%d written by #%d\n",
                     held, held_g, version, row_gen)
         :: else -> skip
         fi;
#endif
         write_check(held, held_g);
         status = new_status; version++;
         resolve_hold(new_status);
#ifdef LOST_COMMIT
         row_tok = 0; gens++; row_gen = gens;  /* every fence clears claim_token */
#endif
         printf("@ fence v%d -> %e\n", held, new_status)
    :: else ->
#ifdef MUTANT_POST_ON_STALE_FENCE
         resolve_hold(new_status);   /* the ledger's write not tied to the row the fence wrote */
#endif
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

/* the token a claim holds (LOST_COMMIT: the claim's write number)           */
#ifdef LOST_COMMIT
#define MY_G my_g
#else
#define MY_G 0
#endif

/* TransferProcessor#process(id) = lock -> claim -> send -> fence -> release.
   (exp_s, exp_v) is what the caller observed: (PENDING, 0) for a dispatch,
   (RECONCILING, v) for the reconciler after lookup said "not found"; exp_g
   the write it observed (LOST_COMMIT only).
   Used exactly once per proctype (it contains labels).                     */
inline process_transfer(me, exp_s, exp_v, exp_g) {
  /* (1) RedisLock#acquire: SET lock:transfer:{id} <token> NX PX ttl       */
  if
  :: lock_owner = me    /* OK: key absent, or the
                                       previous holder's PX ttl ran out      */
  :: atomic { lock_owner != NOBODY } -> goto pl_release  /* nil: held, stop  */
  :: skip                              /* Redis unavailable: DB is the guard  */
  fi;

  /* (2) TransferRepository#claim (stores send_not_after = D_k)              */
  atomic {
#ifdef CLAIM_ON_INSERT
    inserted = 1;
#endif
    if
    :: CLAIM_WHERE(exp_s, exp_v) CLAIM_ID(me) ->
         write_check(exp_v, exp_g);
#ifdef LOST_COMMIT
         if   /* the row before the claim (kept only while a loss can come) */
         :: losses > 0 -> snap_status = status; snap_version = version;
              snap_claim = row_claim; snap_tok = row_tok; snap_gen = row_gen
         :: else -> skip
         fi;
#endif
         status = PROCESSING; version++; claimed_by = me; my_ver = version;
         claims++; my_k = claims; row_claim = my_k; open_m = open_m | BIT(my_k);
#ifdef LOST_COMMIT
         gens++; row_gen = gens; row_tok = row_gen; my_g = row_gen;  /* claim_token */
#endif
#ifdef MUTANT_RECREATE_FRESH
         if :: row_ref == 2 -> ref2_m = ref2_m | BIT(my_k) :: else -> skip fi;
#endif
#ifdef PROVIDER_CLOCK_BEHIND
         if :: skew_over -> skewed_m = skewed_m | BIT(my_k) :: else -> skip fi;
#endif
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
  :: atomic { MY_LEASE > leases_expired_upto -> skip }
  :: atomic { MY_LEASE <= leases_expired_upto -> open_m = open_m & ~BIT(my_k);
              outcome = UNKNOWN;
              printf("@ [%d] lease of v%d too short: nothing sent\n", me, my_ver) } ->
       goto pl_fence
  fi;
#endif

  /* (3a) dispatch through provider.ProviderHttp#send                        */
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
  :: outcome == COMPLETED -> fence(my_ver, MY_G, SENT)
  :: outcome == REJECTED  -> fence(my_ver, MY_G, FAILED)
  :: outcome == UNKNOWN   -> fence(my_ver, MY_G, RECONCILING)
  fi;

pl_release:
  /* (5) RedisLock#release: Lua  if GET(key)==token then DEL(key)            */
  atomic {
    if
    :: lock_owner == me -> lock_owner = NOBODY
    :: else -> skip                    /* not ours any more (ttl ran out)     */
    fi;
#ifdef LOST_COMMIT
    my_g = 0;
#endif
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
#ifdef LOST_COMMIT
#define DISPATCHED_G ANYGEN
#else
#define DISPATCHED_G 0
#endif

active proctype Worker1() {
  byte  my_ver, my_k;
#ifdef LOST_COMMIT
  byte  my_g;
#endif
  mtype outcome;
  process_transfer(W1, PENDING, 0, DISPATCHED_G)
}

#ifndef ONE_WORKER
active proctype Worker2() {
  byte  my_ver, my_k;
#ifdef LOST_COMMIT
  byte  my_g;
#endif
  mtype outcome;
  AFTER_INSERT
  process_transfer(W2, PENDING, 0, DISPATCHED_G)
}
#endif

/* ======================================================================== */
/*  pipeline.Sweeper and Reconciler (dispatch / expireLeases / reconcile)   */
/* ======================================================================== */
#ifdef LOST_COMMIT
#define SW_G g
#else
#define SW_G 0
#endif

/* what a lookup by the row's provider_reference can see                     */
#ifdef MUTANT_RECREATE_FRESH
#define REF_MASK & (row_ref == 2 -> ref2_m : ~ref2_m)
#else
#define REF_MASK
#endif
#define SEEN_EXEC ((exec_m & ~unseen) REF_MASK)
#define SEEN_REJ  (rej_m REF_MASK)

#ifdef KEY_EXPIRY
#define FINISHED (TERMINAL || status == PARKED)
#else
#define FINISHED (TERMINAL)
#endif

#ifdef PROVIDER_CLOCK_BEHIND
#define LAST_DEADLINE pdl_upto    /* the provider's clock decides what can still execute */
#else
#define LAST_DEADLINE dl_upto
#endif

active proctype Sweeper() {
  byte  my_ver, my_k, v;
#ifdef LOST_COMMIT
  byte  my_g, g;
#endif
  mtype outcome, exp_s;
  AFTER_INSERT

sw_loop:
  if
  :: FINISHED -> goto sw_done

  /* Sweeper#dispatchPending: a pending row -> run the worker pipeline      */
#ifdef LOST_COMMIT
  :: atomic { status == PENDING -> exp_s = PENDING; v = version; g = row_gen } -> goto sw_pipeline
#else
  :: atomic { status == PENDING -> exp_s = PENDING; v = version } -> goto sw_pipeline
#endif

  /* Sweeper#expireLeases: SELECT a processing row whose lease expired, then
     TransferRepository#expireLeases: UPDATE ... SET status='reconciling',
     version=version+1 WHERE id=$1 AND status='processing'
     AND lease_expires_at < now() AND version=$v                            */
#ifndef MUTANT_NO_EXPIRE_LEASES
#ifdef LOST_COMMIT
  /* one statement (the row is locked from its SELECT to its UPDATE): the
     UPDATE re-checks that the row is the one it read; it clears claim_token */
  :: atomic { status == PROCESSING && ROW_LEASE <= leases_expired_upto -> v = version; g = row_gen } ->
       atomic {
         if
         :: status == PROCESSING && version == v && row_gen == g && ROW_LEASE <= leases_expired_upto ->
              write_check(v, g);
              status = RECONCILING; version++; row_tok = 0; gens++; row_gen = gens;
              printf("@ sweeper expires the lease of v%d -> reconciling (#%d)\n", v, row_gen)
         :: else -> skip
         fi;
         v = 0; g = 0
       };
       goto sw_loop
#else
  :: atomic { status == PROCESSING && ROW_LEASE <= leases_expired_upto -> v = version } ->
       atomic {
         if
         :: status == PROCESSING && version == v && ROW_LEASE <= leases_expired_upto ->
              write_check(v, 0);
              status = RECONCILING; version++;
              printf("@ sweeper expires the lease of v%d -> reconciling\n", v)
         :: else -> skip
         fi;
         v = 0
       };
       goto sw_loop
#endif
#endif

  /* TransferRepository#takeReconciling: a reconciling row at version v whose
     latest send is settled (send_not_after + settle <= now())              */
#ifdef LOST_COMMIT
  /* the take is an UPDATE too: it sets claim_token, which the reconciler's
     settle and park (fence below) match.  The code draws a fresh token each
     time; here it is the number of the write that made the row reconciling,
     the same for every take of it: with one reconciler no earlier take of it
     is still held, and a counter would grow on every take -> not found ->
     claim refused round                                                      */
  :: atomic { status == RECONCILING && SETTLED ->
                v = version; row_tok = row_gen; g = row_gen;
                printf("@ sweeper takes v%d (token #%d)\n", v, g) } ->
#else
  :: atomic { status == RECONCILING && SETTLED -> v = version } ->
#endif
#ifdef MUTANT_RESEND_WITHOUT_LOOKUP
       exp_s = RECONCILING; goto sw_pipeline       /* (c) blind resend      */
#else
       /* Reconciler#reconcile: ProviderClient#lookup(reference)             */
       if
       :: atomic { faults > 0 -> faults--; v = 0 } -> goto sw_loop   /* lookup error: back off */
       :: atomic { SEEN_EXEC != 0 ->                       /* completed */
            printf("@ sweeper takes v%d, lookup: completed\n", v) };
            fence(v, SW_G, SENT); v = 0; goto sw_loop
       :: atomic { SEEN_EXEC == 0 && SEEN_REJ != 0 ->          /* rejected  */
            printf("@ sweeper takes v%d, lookup: rejected\n", v) };
            fence(v, SW_G, FAILED); v = 0; goto sw_loop
#ifdef KEY_EXPIRY
       :: atomic { SEEN_EXEC == 0 && SEEN_REJ == 0 ->          /* not found */
            printf("@ sweeper takes v%d, lookup: not found\n", v) };
            goto sw_not_found
       /* a lookup that misses an execution (the provider lost its record, a
          lag beyond the bound, an execution it never acknowledged): what the
          provider's key protects against, as long as it keeps the key        */
       :: atomic { faults > 0 && SEEN_EXEC != 0 -> faults--;
            printf("@ sweeper takes v%d, lookup: not found (wrong: the payment exists)\n", v) };
            goto sw_not_found
#else
       :: atomic { SEEN_EXEC == 0 && SEEN_REJ == 0 ->          /* not found */
            printf("@ sweeper takes v%d, lookup: not found\n", v) };
            exp_s = RECONCILING; goto sw_pipeline
#endif
       fi
#endif
  fi;

#ifdef KEY_EXPIRY
sw_not_found:
  /* provider key window: no resend once the first send is older than the
     window less the margin -- park it: money may have moved, an operator
     checks with the provider (the claim checks the age limit again)        */
#ifndef MUTANT_NO_KEY_WINDOW
  if
  :: age_passed -> printf("@ sweeper parks v%d: provider key window passed\n", v);
       fence(v, SW_G, PARKED); v = 0; goto sw_loop
  :: else -> skip
  fi;
#endif
  exp_s = RECONCILING; goto sw_pipeline;
#endif

sw_pipeline:
  process_transfer(SWEEPER, exp_s, v, SW_G);
#ifdef LOST_COMMIT
  atomic { exp_s = 0; v = 0; g = 0 };
#else
  atomic { exp_s = 0; v = 0 };
#endif
  goto sw_loop;

sw_done:
  /* at the end, once no request can execute any more:
     sent => exactly one execution; failed => none                          */
  (LAST_DEADLINE == claims);
  ASSERT(status != SENT   || executions == 1);
  ASSERT(status != FAILED || executions == 0)
#ifdef CANCEL
  ; ASSERT(status != CANCELLED || executions == 0)
#endif
}

/* ======================================================================== */
/*  The owner's cancel (service.TransferService#cancel)                       */
/* ======================================================================== */
/* P6: a cancelled transfer has no execution -- checked where it could start
   to fail: at the cancel (an execution before it) and at every effect (one
   after it).                                                                */
#ifdef CANCEL
#define CANCEL_CHECK ; \
  if :: status == CANCELLED && executions > 0 -> p6_cancelled_executed = 1 :: else -> skip fi; \
  ASSERT(!p6_cancelled_executed)
/* TransferService#cancel reads the row (findById, any status: not pending is
   answered 200 for cancelled, 409 for the rest, without a write), then
   TransferRepository#cancel:
     UPDATE transfers SET status='cancelled', version=version+1
      WHERE id=$1 AND version=$seen AND status='pending'
        AND EXISTS (SELECT 1 FROM database_epochs
                    WHERE started_at=pg_postmaster_start_time())
   Zero rows: the claim won (409) or the server is not adopted yet (503).
   One owner, one cancel request: the read and the UPDATE are two steps, so a
   claim can come between them.                                              */
#if defined(MUTANT_CANCEL_WITHOUT_CHECK)
/* WHERE id=$1: whatever the row is now                                      */
#define CANCEL_WHERE(seen) (true)
#elif defined(LOST_COMMIT)
#define CANCEL_WHERE(seen) (status == PENDING && version == seen && epoch_ok)
#else
#define CANCEL_WHERE(seen) (status == PENDING && version == seen)
#endif
#ifdef LOST_COMMIT
#define CANCEL_G ANYGEN
#else
#define CANCEL_G 0
#endif

active proctype Canceller() {
  byte seen;
  AFTER_INSERT
  atomic { seen = version; if :: status == PENDING -> skip :: else -> goto cancel_end fi };
  atomic {
    if
    :: CANCEL_WHERE(seen) ->
         write_check(seen, CANCEL_G);
         status = CANCELLED; version++;
         if :: hold == NOHOLD -> skip :: else -> ASSERT(hold == HELD); hold = RELEASED fi;
#ifdef LOST_COMMIT
         row_tok = 0; gens++; row_gen = gens;
#endif
         printf("@ owner cancels v%d -> cancelled\n", seen)
         CANCEL_CHECK
    :: else -> cancel_lost = 1; printf("@ owner's cancel of v%d matches no row (409)\n", seen)
    fi
  };
cancel_end:
  skip
}
#else
#define CANCEL_CHECK
#endif

/* ======================================================================== */
/*  Environment                                                               */
/* ======================================================================== */

/* (3b) The provider applies request k, at any moment after its dispatch and
   before D_k passes: executes it, or rejects it definitively.  An execution
   may stay invisible to lookup (lag) until it shows -- at the latest when
   D_k + margin + lag passes (Clock).  PROVIDER_CLOCK_BEHIND: before D_k
   passes on the provider's clock.  KEY_EXPIRY: a request whose reference's
   key the provider still keeps is answered with the key's saved result and
   executes nothing.                                                         */
#if defined(MUTANT_PROVIDER_IGNORES_DEADLINE)
#define APPLICABLE(k) (HAS(wire, k))
#elif defined(PROVIDER_CLOCK_BEHIND)
#define APPLICABLE(k) (HAS(wire, k) && k > pdl_upto)
#else
#define APPLICABLE(k) (HAS(wire, k) && k > dl_upto)
#endif
#ifdef NO_LOOKUP_LAG
#define LAG(k) skip                          /* lookup shows it at once     */
#else
#define LAG(k) unseen = unseen | BIT(k)      /* lookup may not show it yet  */
#endif
/* ghosts of the witnesses, recorded at an execution                         */
#ifdef LOST_COMMIT
#define GHOST_LOST(k) if :: HAS(lost_m, k) -> lost_exec = 1 :: else -> skip fi;
#else
#define GHOST_LOST(k)
#endif
#ifdef PROVIDER_CLOCK_BEHIND
#define GHOST_BEHIND(k) if :: k <= dl_upto -> behind_exec = 1 :: else -> skip fi;
#else
#define GHOST_BEHIND(k)
#endif
#define APPLY_FRESH(k) \
       if \
       :: executions++; exec_m = exec_m | BIT(k); LAG(k); \
          if :: !HAS(open_m, k) -> late_effect = 1 :: else -> skip fi; \
          GHOST_LOST(k) GHOST_BEHIND(k) \
          printf("@ provider executes k=%d (executions=%d)\n", k, executions) \
       :: rej_m = rej_m | BIT(k); printf("@ provider rejects k=%d\n", k) \
       fi
#ifdef KEY_EXPIRY
#define APPLY(k) \
       if \
       :: (exec_m | rej_m) != 0 && !key_gone -> \
            if :: exec_m != 0 -> exec_m = exec_m | BIT(k) :: else -> rej_m = rej_m | BIT(k) fi; \
            replayed = 1; \
            printf("@ provider answers k=%d with its key's saved result\n", k) \
       :: else -> APPLY_FRESH(k) \
       fi
#else
#define APPLY(k) APPLY_FRESH(k)
#endif
#define EFFECT(k) \
  :: atomic { APPLICABLE(k) -> \
       wire = wire & ~BIT(k); \
       APPLY(k); \
       ASSERT(executions <= 1) \
       CANCEL_CHECK }
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
#ifdef PROVIDER_CLOCK_BEHIND
#ifdef MUTANT_NO_SKEW_BOUND
/* settle = margin + lookup lag: the provider's deadline may come after it   */
#define SETTLE_WAITS
#else
/* settle = margin + lookup lag + clock-skew-bound: after the provider's
   deadline, for every claim made while the offset was within the bound     */
#define SETTLE_WAITS && (pdl_upto > settled_upto || HAS(skewed_m, settled_upto + 1))
#endif
#else
#define SETTLE_WAITS
#endif

active proctype Clock() {
end_clock:
  do
  :: atomic { dl_upto < claims && (!HAS(open_m, dl_upto + 1) || pauses > 0) ->
                if :: HAS(open_m, dl_upto + 1) -> pauses-- :: else -> skip fi;
                dl_upto++;
#if !defined(MUTANT_PROVIDER_IGNORES_DEADLINE) && !defined(PROVIDER_CLOCK_BEHIND)
                wire = wire & ~BIT(dl_upto);
#endif
                printf("@ D_%d passes\n", dl_upto) }
#ifdef PROVIDER_CLOCK_BEHIND
  /* the provider's clock passes D_k: at or after the DB clock did           */
  :: atomic { pdl_upto < dl_upto ->
                pdl_upto++; wire = wire & ~BIT(pdl_upto);
                printf("@ D_%d passes on the provider's clock\n", pdl_upto) }
  /* ClockWatch: the measured offset crosses the skew bound (either way)     */
  :: atomic { skews > 0 -> skews--; skew_over = 1 - skew_over;
                if :: skew_over -> printf("@ the provider's clock offset exceeds the skew bound\n")
                   :: else      -> printf("@ the provider's clock offset is back within the bound\n")
                fi }
#endif
  :: atomic { settled_upto < dl_upto SETTLE_WAITS ->
                settled_upto++; unseen = unseen & ~BIT(settled_upto)
#ifdef PROVIDER_CLOCK_BEHIND
                ; printf("@ D_%d + settle passes\n", settled_upto)
#endif
              }
  :: atomic { status == PROCESSING && ROW_LEASE > leases_expired_upto && dl_upto >= row_claim &&
              (crashed[claimed_by] || pauses > 0) ->
                if :: crashed[claimed_by] -> skip :: else -> pauses-- fi;
                leases_expired_upto = ROW_LEASE;
                printf("@ lease of v%d expires\n", version) }
#ifdef KEY_EXPIRY
  /* first_sent_at (set by the first claim) gets older than key-window - margin */
  :: atomic { !age_passed && claims > 0 -> age_passed = 1; age_k = claims;
                printf("@ the first send is older than the key window less the margin\n") }
  /* the provider forgets the key: the margin covers a whole send, so every
     request claimed before the age limit passed its deadline by then       */
  :: atomic { age_passed && !key_gone && dl_upto >= age_k -> key_gone = 1;
                printf("@ the provider forgets the key\n") }
#endif
  od
}

#ifdef LOST_COMMIT
/* PostgreSQL loses its last acknowledged commits (failover to an asynchronous
   replica, a crash with synchronous_commit=off, a restore), the service's
   sweepers adopt the new epoch, and the client retries its POST.            */
#if defined(MUTANT_RECREATE_FRESH)
/* today's cache_stale path: a new row, new random id and reference, pending */
#define RECREATE status = PENDING; row_claim = 0; row_ref = 2
#elif defined(MUTANT_RECREATE_PENDING)
/* same id and derived reference, but pending: claimed and sent at once      */
#define RECREATE status = PENDING; row_claim = 0
#elif defined(MUTANT_RECREATE_WITHOUT_WINDOW)
/* reconciling, but send_not_after NULL: looked up at once                   */
#define RECREATE status = RECONCILING; row_claim = 0
#else
/* same id, derived reference, reconciling, send_not_after = now() + window  */
#define RECREATE status = RECONCILING; row_claim = claims
#endif
#ifdef MUTANT_UNSEEN_PENDING
/* the key's row inserted as any new one: pending, claimed and sent at once  */
#define RECREATE_UNSEEN status = PENDING; row_claim = 0
#else
/* INSERT_LOOKUP_FIRST: reconciling; send_not_after = greatest(now(), the
   adoption + send window), past the deadline of every claim the old server
   took, or now() + window while the server is not adopted yet              */
#define RECREATE_UNSEEN status = RECONCILING; row_claim = claims
#endif
#ifdef MUTANT_ADOPT_WITHOUT_WINDOW
#define ADOPT_PUSH skip
#else
/* send_not_after = greatest(send_not_after, now() + send window): past the
   deadline of every claim made so far, lost or not                          */
#define ADOPT_PUSH row_claim = claims
#endif

active proctype Failover() {
end_failover:
  do
  :: atomic { losses > 0 && claims > 0 && !TERMINAL && status != ABSENT ->
       losses--; epoch_ok = 0;
       if
       :: /* (a) the latest claim is lost: the row is back as it was before it */
          status == PROCESSING && row_claim == claims ->
          lost_m = BIT(claims);
          status = snap_status; version = snap_version; row_claim = snap_claim;
          row_tok = snap_tok; row_gen = snap_gen;
          printf("@ database loses claim k=%d: the row is back at %e v%d (#%d)\n",
                 claims, status, version, row_gen)
       :: /* (b) the INSERT is lost (and every commit after it): no row       */
          lost_m = BIT(claims + 1) - 2;
          status = ABSENT; version = 0; row_claim = 0; row_tok = 0; row_gen = 0;
          hold = NOHOLD;  /* the account's hold was in the lost commits too */
          printf("@ database loses the INSERT: no row\n")
       fi;
       snap_status = 0; snap_version = 0; snap_claim = 0; snap_tok = 0; snap_gen = 0 }
#ifndef MUTANT_NO_EPOCH
  /* ADOPT_EPOCH (any instance's sweeper round): one statement             */
  :: atomic { !epoch_ok -> epoch_ok = 1;
       if
       :: status == PENDING || status == RECONCILING ->
            status = RECONCILING; version++; ADOPT_PUSH; row_tok = 0; gens++; row_gen = gens;
            printf("@ epoch adopted: -> reconciling v%d, send_not_after = D_%d (#%d)\n", version, row_claim, row_gen)
       :: else -> printf("@ epoch adopted: row %e left as it is\n", status)
       fi }
#endif
  /* the client retries with the same key: IdempotencyService finds the Redis
     entry and no row (cache_stale) and re-creates it                        */
  :: atomic { status == ABSENT ->
       version = 0; row_tok = 0; RECREATE; gens++; row_gen = gens;
       if :: executions > 0 -> recreated_paid = 1 :: else -> skip fi;
       printf("@ client retries: row re-created %e v0 (#%d)\n", status, row_gen) }
#ifndef MUTANT_RECREATE_FRESH
  /* the client retries and its read of the Redis entry does not answer: the
     database path finds no row for the key and inserts one (a new id, the
     reference derived from the intent) for a lookup first                    */
  :: atomic { status == ABSENT ->
       version = 0; row_tok = 0; RECREATE_UNSEEN; gens++; row_gen = gens;
       if :: executions > 0 -> recreated_paid = 1 :: else -> skip fi;
       printf("@ client retries, Redis does not answer: row inserted %e v0 (#%d)\n", status, row_gen) }
#endif
  od
}
#endif

/* ======================================================================== */
/*  Properties                                                                */
/* ======================================================================== */
ltl p1_at_most_one_execution   { [] (executions <= 1) }
#ifdef CANCEL
ltl p2_no_write_after_terminal { [] (!p2_write_after_terminal
                                     && (status == SENT   -> [] (status == SENT))
                                     && (status == FAILED -> [] (status == FAILED))
                                     && (status == CANCELLED -> [] (status == CANCELLED))) }
#else
ltl p2_no_write_after_terminal { [] (!p2_write_after_terminal
                                     && (status == SENT   -> [] (status == SENT))
                                     && (status == FAILED -> [] (status == FAILED))) }
#endif
ltl p3_no_stale_write          { [] (!p3_stale_write) }
#ifdef CANCEL
ltl l1_hold_follows_status     { [] ((hold == POSTED -> status == SENT)
                                     && (hold == RELEASED -> (status == FAILED || status == CANCELLED))
                                     && (hold == HELD -> !TERMINAL)) }
#else
ltl l1_hold_follows_status     { [] ((hold == POSTED -> status == SENT)
                                     && (hold == RELEASED -> status == FAILED)
                                     && (hold == HELD -> !TERMINAL)) }
#endif
#ifdef CANCEL
ltl p4_eventually_terminal     { <> (status == SENT || status == FAILED || status == CANCELLED) }
#else
ltl p4_eventually_terminal     { <> (status == SENT || status == FAILED) }
#endif
ltl p5_outcome_matches_provider { [] ((status == SENT   -> executions == 1) &&
                                      (status == FAILED -> executions == 0)) }
#ifdef CANCEL
ltl p6_cancelled_never_executed { [] (status == CANCELLED -> executions == 0) }
#endif

/* Witnesses: expected to be VIOLATED by the correct model.  They show that the
   interleavings the properties are about are reachable (the checks are not
   vacuous): a stale worker is fenced off, a transfer whose worker was killed
   after its claim/send is still finished (by the sweeper), and a request
   executes after its caller gave up on it.                                   */
ltl w1_stale_fence_reachable   { [] (stale_fences == 0) }
ltl w2_killed_worker_recovered { [] !(crashed[W1] && (status == SENT || status == FAILED)) }
ltl w3_effect_after_give_up    { [] !late_effect }
#ifdef CANCEL
/* the owner's cancel wins the race with the claims, and loses it            */
ltl w9_cancel_wins             { [] (status != CANCELLED) }
ltl w10_cancel_loses_race      { [] !cancel_lost }
#endif
#ifdef LOST_COMMIT
/* a request whose claim the database forgot still executes after the loss;
   a row lost after its payment executed is re-created and ends sent         */
ltl w4_lost_claim_executes     { [] !lost_exec }
ltl w5_recreated_row_sent      { [] !(recreated_paid && status == SENT) }
#endif
#ifdef PROVIDER_CLOCK_BEHIND
/* the provider executes a request after its deadline passed on the DB clock */
ltl w6_executes_after_db_deadline { [] !behind_exec }
#endif
#ifdef KEY_EXPIRY
/* a resend is answered from the provider's key; a transfer is parked        */
ltl w7_resend_answered_by_key  { [] !replayed }
ltl w8_parked                  { [] (status != PARKED) }
/* P4 with parking: a parked transfer waits for an operator on purpose      */
ltl p4_finished_or_parked      { <> (status == SENT || status == FAILED || status == PARKED) }
#endif
