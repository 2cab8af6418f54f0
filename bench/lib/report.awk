# Turns the benchmark's results rows (tab-separated: name, transport, req/s, p50, p99, max ms, errors,
# requests, RSS MB, CPU s, threads, bytes read) into the Markdown table, the verdict on each performance target, and
# HTTP/2 against nginx's and against chatterd's own HTTP/1.1.
# Variables: baselines ("scenario=baseline ..."), http11 ("h2 scenario=its HTTP/1.1 scenario ..."),
# connections (wrk and h2load -c), streams (h2load -m), body_bytes (/getmaps body), gzip_bytes (chatterd's gzip
# form of it), idle_threads (of the idle server before the load), built_kb (chatterd's RSS once its feed is
# built after a start), held ("before_kb after_kb readers" from bench/lib/held_versions.py), bulk ("idle_kb
# body_bytes gzip_bytes rows" from bench/lib/bulk.sh), open_rate and mix_rps (the rate mix-open offered and the
# closed-loop mix's it is half of), open (bench/lib/open_loop.py's OPEN line: "key=value ...").
BEGIN {
    FS = "\t"
    split(baselines, pairs, " ")
    for (i in pairs) { split(pairs[i], kv, "="); base[kv[1]] = kv[2] }
    split(http11, pairs, " ")
    for (i in pairs) { split(pairs[i], kv, "="); h1[kv[1]] = kv[2] }
    split(open, pairs, " ")
    for (i in pairs) { split(pairs[i], kv, "="); opened[kv[1]] = kv[2] }
}

{
    n++; name[n] = $1; transport[n] = $2; k = $1 SUBSEP $2
    rps[k] = $3; p50[k] = $4; p99[k] = $5; maxms[k] = $6; errors[k] = $7; requests[k] = $8; rss[k] = $9; cpu[k] = $10; threads[k] = $11; bytes[k] = $12
}

# The ratio of scenario S's req/s over TRANSPORT to its baseline's ("" when either is missing).
function ratio(s, t,    b) {
    if (!(s in base) || !((s SUBSEP t) in rps)) return ""
    b = base[s] SUBSEP t
    if (!(b in rps)) b = base[s] SUBSEP "socket"
    if (!(b in rps) || rps[b] <= 0) return ""
    return rps[s SUBSEP t] / rps[b]
}

function target(text, measured, met) {
    printf "| %s | %s | %s |\n", text, measured, met == "" ? "not measured" : (met ? "**met**" : "**not met**")
}

# A row for "chatterd's req/s ≥ FACTOR × its baseline's" over TRANSPORT (TLS when not given).
function ratio_target(text, s, factor, transport,    r) {
    if (transport == "") transport = "tls"
    r = ratio(s, transport)
    if (r == "") { target(text, "-", ""); return }
    target(text, sprintf("%.2f × (%.0f vs %.0f req/s)", r, rps[s SUBSEP transport], rps[s SUBSEP transport] / r),
        r >= factor)
}

# CPU seconds of scenario S over TRANSPORT per request it finished, in microseconds ("" when unknown).
function cpu_per_request(s, transport,    k) {
    k = s SUBSEP transport
    if (!(k in cpu) || cpu[k] == "-" || requests[k] <= 0) return ""
    return cpu[k] * 1e6 / requests[k]
}

# A row for "chatterd's CPU per request ≤ FACTOR × its baseline's" over TRANSPORT.
function cpu_target(text, s, factor, transport,    ours, theirs) {
    ours = cpu_per_request(s, transport)
    theirs = (s in base) ? cpu_per_request(base[s], transport) : ""
    if (ours == "" || theirs == "" || theirs <= 0) { target(text, "-", ""); return }
    target(text, sprintf("%.2f × (%.1f vs %.1f µs of CPU a request)", ours / theirs, ours, theirs),
        ours <= factor * theirs)
}

# A row for "chatterd's p99 ≤ FACTOR × its baseline's" over TRANSPORT.
function p99_target(text, s, factor, transport,    k, b) {
    k = s SUBSEP transport
    b = (s in base) ? base[s] SUBSEP transport : ""
    if (!(k in p99) || !(b in p99) || p99[b] <= 0) { target(text, "-", ""); return }
    target(text, sprintf("%.2f × (%.2f vs %.2f ms)", p99[k] / p99[b], p99[k], p99[b]), p99[k] <= factor * p99[b])
}

function table(    i, k, r) {
    print "| scenario | transport | req/s | ratio | baseline | p50 ms | p99 ms | max ms | errors | RSS MB | CPU s | threads |"
    print "|---|---|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|"
    for (i = 1; i <= n; i++) {
        k = name[i] SUBSEP transport[i]
        r = ratio(name[i], transport[i])
        printf "| %s | %s | %.0f | %s | %s | %.2f | %.2f | %.2f | %d | %s | %s | %s |\n", name[i], transport[i], rps[k],
            r == "" ? "" : sprintf("%.2f", r), r == "" ? "" : base[name[i]], p50[k], p99[k], maxms[k], errors[k],
            rss[k], cpu[k], threads[k]
    }
}

# A row for "req/s of A ≥ FACTOR × req/s of B" over TLS.
function pair_target(text, a, b, factor,    ka, kb, r) {
    ka = a SUBSEP "tls"; kb = b SUBSEP "tls"
    if (!(ka in rps) || !(kb in rps) || rps[kb] <= 0) { target(text, "-", ""); return }
    r = rps[ka] / rps[kb]
    target(text, sprintf("%.2f × (%.0f vs %.0f req/s)", r, rps[ka], rps[kb]), r >= factor)
}

# A row for the mix against the rate its parts predict, 1 / (0.9 / get + 0.1 / post), with GET the
# gzip read at one size of the feed.
function mix_target(text, get,    km, kg, kp, predicted, r) {
    km = "mix" SUBSEP "tls"; kg = get SUBSEP "tls"; kp = "post" SUBSEP "tls"
    if (!(km in rps) || !(kg in rps) || !(kp in rps) || rps[kg] <= 0 || rps[kp] <= 0) { target(text, "-", ""); return }
    predicted = 1 / (0.9 / rps[kg] + 0.1 / rps[kp])
    r = rps[km] / predicted
    target(text, sprintf("%.2f × (%.0f vs %.0f predicted from %.0f reads/s and %.0f posts/s)", r, rps[km], predicted,
        rps[kg], rps[kp]), r >= 0.8)
}

# Rows for the mix's peak RSS over TRANSPORT against the read-only peak (getmaps, getmaps-gzip) and against
# body + gzip.
function mix_memory_targets(transport,    km, read, s, forms) {
    km = "mix" SUBSEP transport
    forms = (body_bytes + gzip_bytes) / 1048576
    read = -1
    for (s in reads) if ((reads[s] SUBSEP transport) in rss) read = max(read, rss[reads[s] SUBSEP transport] + 0)
    if (!(km in rss) || read <= 0 || gzip_bytes <= 0) {
        target("peak RSS in the 90/10 mix ≤ 1.2 × the read-only peak and ≤ 3 × (body + gzip), " transport, "-", "")
        return
    }
    target(sprintf("peak RSS in the 90/10 mix ≤ 1.2 × the read-only peak (getmaps, getmaps-gzip), %s", transport),
        sprintf("%.2f × (%.1f vs %.1f MB)", rss[km] / read, rss[km], read), rss[km] <= 1.2 * read)
    target(sprintf("peak RSS in the 90/10 mix ≤ 3 × (body + gzip) = %.1f MB, %s", 3 * forms, transport),
        sprintf("%.2f × (%.1f MB)", rss[km] / forms, rss[km]), rss[km] <= 3 * forms)
}

function max(a, b) { return a > b ? a : b }

# Rows for the process after a start on the stored feed, and for readers holding older versions.
function held_memory_targets(    forms, parts, per) {
    forms = (body_bytes + gzip_bytes) / 1048576
    if (built_kb > 0 && gzip_bytes > 0)
        target(sprintf("RSS after a start with %d chatts stored, once the feed is built (both forms) ≤ 3 × (body + gzip) = %.1f MB",
            rows, 3 * forms), sprintf("%.2f × (%.1f MB)", built_kb / 1024 / forms, built_kb / 1024),
            built_kb / 1024 <= 3 * forms)
    else target("RSS after a start, once the feed is built ≤ 3 × (body + gzip)", "-", "")
    if (split(held, parts, " ") == 3 && parts[3] > 0 && gzip_bytes > 0) {
        per = (parts[2] - parts[1]) / parts[3] / 1024
        target(sprintf("RSS per slow reader holding an older version ≤ 1/16 × (body + gzip) = %.2f MB (a whole version was body + gzip; meant for --rows 100000)",
            forms / 16), sprintf("%.3f MB (%d readers: %.1f → %.1f MB)", per, parts[3], parts[1] / 1024,
            parts[2] / 1024), per <= forms / 16)
    } else target("RSS per slow reader holding an older version ≤ 1/16 × (body + gzip)", "-", "")
}

# The row for the feed that comes to be by another writer's bulk insert (bench/lib/bulk.sh): the resident set once
# idle after the first reads of both forms, and the peak from the insert to the end of the reads, over the
# body + gzip that chatterd then sent.
function bulk_memory_target(    parts, forms, k, idle, text) {
    k = "bulk-insert" SUBSEP "tls"
    text = "RSS after another writer's bulk insert ≤ 3 × (body + gzip): idle after the first reads of both forms, and peak while " connections " clients read them"
    if (split(bulk, parts, " ") != 4 || parts[3] <= 0 || !(k in rss)) { target(text, "-", ""); return }
    forms = (parts[2] + parts[3]) / 1048576
    idle = parts[1] / 1024
    target(sprintf("%s (%d chatts inserted by psql; 3 × = %.1f MB)", text, parts[4], 3 * forms),
        sprintf("idle %.2f × (%.1f MB), peak %.2f × (%.1f MB); body + gzip %.1f + %.1f MB", idle / forms, idle,
            rss[k] / forms, rss[k], parts[2] / 1048576, parts[3] / 1048576),
        idle <= 3 * forms && rss[k] <= 3 * forms)
}

# The row for a lone client's post (post-lone, wrk -t1 -c1) against one commit's flush (pgbench -c1), TLS, with plain
# HTTP beside it.
function lone_post_target(    k, kp, f, text, plain) {
    k = "post-lone" SUBSEP "tls"; kp = "post-lone" SUBSEP "plain"; f = "pgbench-c1" SUBSEP "socket"
    text = "a lone client's post p50 ≤ 2 × pgbench -c1 p50 (one commit's flush), same run"
    if (!(k in p50) || !(f in p50) || p50[f] <= 0) { target(text, "-", ""); return }
    plain = (kp in p50) ? sprintf("; plain %.2f × (%.2f ms)", p50[kp] / p50[f], p50[kp]) : ""
    target(text, sprintf("%.2f × (%.2f vs %.2f ms)%s", p50[k] / p50[f], p50[k], p50[f], plain), p50[k] <= 2 * p50[f])
}

# The row for the open-loop mix (mix-open): p99 from each request's due time, at half the closed-loop mix's rate.
function open_mix_target(    k, text) {
    k = "mix-open" SUBSEP "tls"
    text = "open-loop 90/10 mix at half the closed-loop throughput, TLS: p99 ≤ 10 ms"
    if (!(k in p99) || open_rate <= 0) { target(text, "-", ""); return }
    target(text, sprintf("p99 %.2f ms (p50 %.2f, max %.2f; reads p99 %.2f, posts p99 %.2f) at %d req/s offered, half of the mix's %.0f; %d errors; the generator's own lateness p99 %.2f ms, most requests waiting for a connection %d",
        p99[k], p50[k], maxms[k], opened["reads_p99_us"] / 1000, opened["posts_p99_us"] / 1000, open_rate, mix_rps,
        errors[k], opened["lag_p99_us"] / 1000, opened["most_waiting"]), p99[k] <= 10 && errors[k] == 0)
}

function targets(    k, f, i, peak, at, growth, per, g, h, budget) {
    print "| target (TLS, wrk -c" connections ") | measured | |"
    print "|---|---|---|"
    ratio_target("GET /getmaps with Accept-Encoding: gzip ≥ 0.9 × nginx gzip_static, same bytes", "getmaps-gzip", 0.9)
    ratio_target("tiny route ≥ 0.8 × nginx with 1 worker", "tiny", 0.8)
    ratio_target("tiny route over plain HTTP ≥ 0.7 × nginx with 1 worker", "tiny", 0.7, "plain")
    cpu_target("CPU per tiny request ≤ 1.3 × nginx's with 1 worker", "tiny", 1.3, "tls")
    ratio_target("HTTP/2 tiny route ≥ 0.6 × nginx http2 with 1 worker (h2load)", "h2-tiny", 0.6, "h2")
    p99_target("HTTP/2 tiny route p99 ≤ 2 × nginx http2's", "h2-tiny", 2, "h2")
    pair_target("durable POST /postmaps ≥ 0.8 × a same-sized POST refused with 400 before any database work",
        "post", "post-rejected", 0.8)
    ratio_target("durable POST /postmaps ≥ 1.6 × pgbench, one INSERT a transaction", "post", 1.6)
    lone_post_target()
    mix_target("90/10 mix ≥ 0.8 × the rate its parts predict, reads at the feed's size before the mix", "getmaps-gzip")
    mix_target("90/10 mix ≥ 0.8 × the rate its parts predict, reads at the feed's size after the mix",
        "getmaps-gzip-end")
    # The closed-loop mix's latency is reported, not held to a target: its clients send again as soon as they are
    # answered, so by Little's law its mean latency is the clients over the throughput. mix-open's is the target.
    k = "mix" SUBSEP "tls"
    if (k in rps) target("90/10 mix, closed loop: no error", sprintf("%d errors (p99 %.2f ms; %d clients / %.0f req/s = %.2f ms mean by Little's law)",
        errors[k], p99[k], connections, rps[k], rps[k] > 0 ? connections * 1000 / rps[k] : 0), errors[k] == 0)
    else target("90/10 mix, closed loop: no error", "-", "")
    open_mix_target()
    if ((k in threads) && idle_threads != "")
        target("threads at idle / during the mix ≤ 12", sprintf("%d / %d", idle_threads, threads[k]),
            idle_threads <= 12 && threads[k] <= 12)
    else target("threads at idle / during the mix ≤ 12", "-", "")
    peak = -1
    for (i = 1; i <= n; i++) {
        k = name[i] SUBSEP transport[i]
        if (name[i] ~ /^(nginx|pgbench)/ || rss[k] == "-") continue
        if (rss[k] + 0 > peak) { peak = rss[k] + 0; at = name[i] " " transport[i] }
    }
    # One bound for every scenario: the one the mix and the start are held to below (3 ×).
    budget = 3 * (body_bytes + gzip_bytes) / 1048576
    if (peak >= 0 && gzip_bytes > 0)
        target(sprintf("server RSS in every scenario ≤ 3 × (body + its gzip form) = %.1f MB (meant for --rows 100000; at %d rows the idle process dominates)",
            budget, rows), sprintf("peak %.1f MB (%s)", peak, at), peak <= budget)
    else target("server RSS in every scenario ≤ 3 × (body + its gzip form)", "-", "")
    reads[1] = "getmaps"; reads[2] = "getmaps-gzip"
    mix_memory_targets("tls")
    mix_memory_targets("plain")
    held_memory_targets()
    bulk_memory_target()
    k = "getmaps-conns" SUBSEP "tls"; g = "getmaps" SUBSEP "tls"
    if ((k in rss) && (g in rss) && body_bytes > 0) {
        growth = rss[k] - rss[g]
        per = growth * 1048576 / (3 * connections)
        target(sprintf("memory does not grow with polling connections (< half a %d-byte body per extra connection)",
            body_bytes), sprintf("%.1f MB at -c%d, %.1f MB at -c%d: %.0f bytes per extra connection", rss[g],
            connections, rss[k], 4 * connections, per), per < body_bytes / 2)
    } else target("memory does not grow with polling connections", "-", "")
    k = "h2-getmaps-gzip" SUBSEP "h2"
    if ((k in rps) && (("nginx-h2-getmaps-gzip" SUBSEP "h2") in rps)) {
        h = rps[k] / rps["nginx-h2-getmaps-gzip" SUBSEP "h2"]
        target("HTTP/2 GET /getmaps with gzip ≥ 0.9 × nginx http2, same bytes (h2load)",
            sprintf("%.2f × (%.0f vs %.0f req/s)", h, rps[k], rps["nginx-h2-getmaps-gzip" SUBSEP "h2"]), h >= 0.9)
    } else target("HTTP/2 GET /getmaps with gzip ≥ 0.9 × nginx http2, same bytes (h2load)", "-", "")
    # Per MB sent rather than per request: wrk counts only finished requests, but every byte read, so
    # this stays meaningful when a 100 000-row body lets few requests finish in a short run.
    if ((g in cpu) && bytes[g] > 0)
        printf "| getmaps cost grows at most linearly with the body (compare runs at --rows 1000 and 100000) | %.2f ms CPU per MB sent (%.3f ms per request) | see RESULTS.md |\n",
            cpu[g] * 1000 / (bytes[g] / 1048576), (requests[g] > 0 ? cpu[g] * 1000 / requests[g] : 0)
}

# "R × (B req/s)": req/s of K over that of key B, or "-" when either is missing.
function times(k, b) {
    if (!(k in rps) || !(b in rps) || rps[b] <= 0) return "-"
    return sprintf("%.2f × (%.0f req/s)", rps[k] / rps[b], rps[b])
}

# Each HTTP/2 scenario against nginx's http2 and against chatterd's HTTP/1.1 over TLS for the same request.
function h2_table(    i, k, s) {
    for (i = 1; i <= n; i++) if (transport[i] == "h2" && name[i] in h1) break
    if (i > n) return
    print ""
    print "| HTTP/2 over TLS (h2load -c" connections " -m" streams ") | req/s | vs nginx http2 | vs chatterd HTTP/1.1 over TLS (wrk) | p99 ms | errors |"
    print "|---|--:|--:|--:|--:|--:|"
    for (i = 1; i <= n; i++) {
        s = name[i]
        if (transport[i] != "h2" || !(s in h1)) continue
        k = s SUBSEP "h2"
        printf "| %s | %.0f | %s | %s | %.2f | %d |\n", s, rps[k], times(k, base[s] SUBSEP "h2"),
            times(k, h1[s] SUBSEP "tls"), p99[k], errors[k]
    }
}

END {
    table()
    print ""
    print "errors: responses with status ≥ 400 plus socket errors (connect, read, write, timeout); h2load: failed"
    print "requests (status ≥ 400, or a stream reset or left unanswered, as past a GOAWAY); pgbench: failed"
    print "transactions; post-rejected: its 400s, which are what it measures. RSS: peak resident set during the"
    print "scenario (nginx: master and workers summed);"
    print "CPU: user + system seconds of the server during the scenario. Ratios: req/s over the baseline's, same transport."
    print ""
    targets()
    h2_table()
}
