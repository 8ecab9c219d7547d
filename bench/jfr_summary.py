#!/usr/bin/env python3
"""Summarises `jfr print --events jdk.ExecutionSample` output: where the service's CPU samples go.

Self time = the top frame of each sample; inclusive = samples with at least one frame in a category; "where the
CPU went" = each sample counted once, in the group of the first frame from the top that belongs to one of GROUPS
(the grouping of bench/CPU-AB.md's tables).
Usage: jfr_summary.py samples.txt
"""
import collections
import re
import sys

FRAME = re.compile(r'^\s+([\w$.<>]+)\(')

CATEGORIES = [
    ("JWT verification (smallrye-jwt / jose4j, RSA)", ("org.jose4j", "io.smallrye.jwt", "sun.security.rsa", "java.math.BigInteger")),
    ("SHA-256 fingerprints / idempotency key hashing", ("idempotency.Fingerprint", "sun.security.provider.SHA2", "sun.security.provider.DigestBase")),
    ("JSON: request parse (TransferRequestParser / Jackson tree)", ("api.TransferRequestParser",)),
    ("JSON: response write (Jackson serialisation)", ("com.fasterxml.jackson.databind.ser", "com.fasterxml.jackson.core.json.UTF8JsonGenerator", "com.fasterxml.jackson.core.json.WriterBasedJsonGenerator")),
    ("Jackson (any)", ("com.fasterxml.jackson",)),
    ("PostgreSQL client (vertx-pg-client)", ("io.vertx.pgclient", "io.vertx.sqlclient")),
    ("Redis client (vertx-redis-client)", ("io.vertx.redis", "io.quarkus.redis")),
    ("provider client (REST client or Vert.x's)", ("org.jboss.resteasy.reactive.client", "io.quarkus.rest.client", "io.vertx.core.http.impl.HttpClient",
                                                   "io.vertx.core.http.impl.Http1xClient", "dev.ledgerline.transfers.provider.ProviderHttp")),
    ("Fault tolerance (SmallRye FT: timeout, breaker, bulkhead)", ("io.smallrye.faulttolerance",)),
    ("Micrometer metrics", ("io.micrometer",)),
    ("Logging (JBoss LogManager / JSON console)", ("org.jboss.logmanager", "io.quarkus.logging", "org.jboss.logging")),
    ("HTTP server (Vert.x / Netty)", ("io.vertx.core.http.impl.Http1xServer", "io.netty")),
    ("Netty I/O (any)", ("io.netty",)),
    ("Mutiny", ("io.smallrye.mutiny",)),
    ("pipeline (TransferProcessor)", ("pipeline.TransferProcessor",)),
    ("UUID.randomUUID (SecureRandom)", ("java.util.UUID.randomUUID", "sun.security.provider.NativePRNG", "java.security.SecureRandom")),
    ("Regex", ("java.util.regex",)),
]

# Checked in order for each frame from the top; the first group that matches a frame takes the sample.
GROUPS = [
    ("JDK crypto / hashing (SHA-256)", ("sun.security.provider", "java.security.MessageDigest", "dev.ledgerline.transfers.hashing")),
    ("Jackson (JSON)", ("com.fasterxml.jackson",)),
    ("Redis client", ("io.vertx.redis", "io.quarkus.redis")),
    ("PostgreSQL client", ("io.vertx.pgclient", "io.vertx.sqlclient")),
    # the provider's client: Quarkus's REST client up to 706d3dd, Vert.x's HTTP client (ProviderHttp) since
    ("provider client + fault tolerance (provider send)", ("org.jboss.resteasy.reactive.client", "io.quarkus.rest.client",
                                                           "io.vertx.core.http.impl.HttpClient", "io.vertx.core.http.impl.Http1xClient",
                                                           "dev.ledgerline.transfers.provider.ProviderHttp",
                                                           "io.smallrye.faulttolerance")),
    ("Micrometer", ("io.micrometer", "io.quarkus.micrometer")),
    ("logging", ("org.jboss.logmanager", "org.jboss.logging", "io.quarkus.logging")),
    ("context propagation (SmallRye CP, Narayana)", ("io.smallrye.context", "com.arjuna", "io.quarkus.narayana",
                                                     "io.smallrye.mutiny.context")),
    ("security / JWT", ("io.smallrye.jwt", "org.jose4j", "io.quarkus.security", "io.quarkus.vertx.http.runtime.security",
                        "dev.ledgerline.transfers.security")),
    ("Quarkus REST server", ("org.jboss.resteasy.reactive.server", "io.quarkus.resteasy.reactive")),
    ("CDI (ArC)", ("io.quarkus.arc",)),
    ("Mutiny", ("io.smallrye.mutiny",)),
    ("service code", ("dev.ledgerline",)),
    ("Vert.x web router + HTTP server", ("io.vertx.ext.web", "io.vertx.core.http", "io.quarkus.vertx.http")),
    ("Vert.x core", ("io.vertx",)),
    ("Netty (I/O, buffers, event loop)", ("io.netty",)),
]


def group_of(sample):
    for frame in sample:
        for name, prefixes in GROUPS:
            if frame.startswith(prefixes):
                return name
    return "JDK / other"


def main(path):
    samples = []
    current = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("jdk.ExecutionSample"):
                current = []
                samples.append(current)
            elif current is not None:
                m = FRAME.match(line)
                if m:
                    current.append(m.group(1))
    samples = [s for s in samples if s]
    total = len(samples)
    print(f"execution samples: {total}")
    if not total:
        return
    self_time = collections.Counter(s[0] for s in samples)
    print("\nTop 20 methods by self samples:")
    for method, n in self_time.most_common(20):
        print(f"  {100.0 * n / total:5.1f}%  {n:6d}  {method}")
    print("\nInclusive samples by category (a sample counts once per category; categories overlap):")
    for name, needles in CATEGORIES:
        n = sum(1 for s in samples if any(any(x in fr for x in needles) for fr in s))
        print(f"  {100.0 * n / total:5.1f}%  {n:6d}  {name}")
    app = collections.Counter()
    for s in samples:
        for fr in s:
            if fr.startswith("dev.ledgerline"):
                app[fr] += 1
                break
    groups = collections.Counter(group_of(s) for s in samples)
    print("\nWhere the CPU went (each sample once: the first frame from the top in one of the groups):")
    for name in [g for g, _ in GROUPS] + ["JDK / other"]:
        print(f"  {100.0 * groups[name] / total:5.1f}%  {groups[name]:6d}  {name}")
    print("\nInnermost service frame of each sample (which service code led to the work):")
    for method, n in app.most_common(15):
        print(f"  {100.0 * n / total:5.1f}%  {n:6d}  {method}")


if __name__ == "__main__":
    main(sys.argv[1])
