/**
 * The dashboard's script, served as `dashboard.js`: polls `live` (the
 * {@linkcode LiveFrame} of `live_view.ts`) about once a second and draws
 * every level. Plain browser JavaScript with no dependency: it builds the
 * page with DOM calls only (never `innerHTML`, so that no name from a
 * request can inject markup), sets sizes through the CSSOM (allowed by a
 * Content-Security-Policy without `'unsafe-inline'`), and keeps the last
 * five minutes of each level for its charts. When the frame has a learned
 * server concurrency limit (`adaptive`), a card above the levels charts it
 * against the seats in use over the limited levels, with the controller's
 * phase, minRTT, sampleRTT and gradient; with a static limit the card stays
 * hidden.
 *
 * @module
 */

/** The script. */
export const DASHBOARD_JS = String.raw`"use strict";
(() => {
  const POLL_MS = 1000;
  const KEEP_MS = 5 * 60 * 1000;
  // A chart spans its points (up to KEEP_MS), and a minute at least: a fresh page's few
  // seconds are not a sliver at the right edge of five minutes.
  const MIN_SPAN_MS = 60 * 1000;
  const REASONS = ["queue-full", "concurrency-limit", "time-out", "cancelled"];
  const SVG = "http://www.w3.org/2000/svg";
  const history = new Map();
  // The learned limit's points (frame.adaptiveHistory, then one per frame).
  let adaptiveHistory = [];
  let lastOk = 0;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "className") node.className = v;
      else node.setAttribute(k, v);
    }
    for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return node;
  }
  const fmt = (n, digits) => n === null || n === undefined ? "–" :
    Number(n).toLocaleString("en-US", { maximumFractionDigits: digits === undefined ? 1 : digits });
  const ms = (seconds) => seconds === null || seconds === undefined ? "–" : fmt(seconds * 1000, 0) + " ms";
  const sum = (o) => o ? REASONS.reduce((s, r) => s + (o[r] || 0), 0) : null;

  function number(label, value, bad) {
    return el("div", {}, el("dt", {}, label), el("dd", bad ? { className: "bad" } : {}, value));
  }

  function bar(level) {
    const l = level.limits;
    const scale = Math.max(1, l.current, l.nominal, level.seatsInUse + level.seatsWaiting);
    const pct = (x) => Math.min(100, (x / scale) * 100) + "%";
    const fill = el("div", { className: "fill" });
    fill.style.width = pct(level.seatsInUse);
    const queued = el("div", { className: "queued" });
    queued.style.left = pct(level.seatsInUse);
    queued.style.width = pct(Math.min(level.seatsWaiting, scale - Math.min(scale, level.seatsInUse)));
    const limit = el("div", { className: "mark", title: "current limit " + l.current });
    limit.style.left = pct(l.current);
    const nominal = el("div", { className: "mark nominal", title: "nominal limit " + l.nominal });
    nominal.style.left = pct(l.nominal);
    return el("div", { className: "bar", role: "img",
      "aria-label": level.seatsInUse + " of " + l.current + " seats in use, " + level.seatsWaiting + " seats waiting" },
      fill, queued, nominal, limit);
  }

  function strip(level) {
    if (level.queues.length === 0) return el("p", { className: "empty" }, "No queues (" + (level.type === "Exempt" ? "exempt" : "rejects at once") + ").");
    const cells = level.queues.map((q) => {
      const shade = q.waiting === 0 ? "" : q.waiting < 3 ? "w1" : q.waiting < 10 ? "w2" : q.waiting < 30 ? "w3" : "w4";
      const cls = [shade, q.executing > 0 ? "busy" : ""].filter(Boolean).join(" ");
      return el("span", { className: cls, title: "queue " + q.index + ": " + q.waiting + " waiting, " + q.executing + " executing, " + q.seatsInUse + " seats" },
        q.waiting > 0 ? String(q.waiting) : "");
    });
    return el("div", { className: "strip", role: "list", "aria-label": "queues" }, ...cells);
  }

  function table(caption, head, rows) {
    if (rows.length === 0) return el("div", {}, el("h3", {}, caption), el("p", { className: "empty" }, "none"));
    return el("div", {}, el("h3", {}, caption), el("table", {},
      el("thead", {}, el("tr", {}, ...head.map((h, i) => el("th", i > 1 ? { className: "n" } : {}, h)))),
      el("tbody", {}, ...rows.map((r) => el("tr", {}, ...r.map((c, i) => el("td", i > 1 ? { className: "n" } : {}, c)))))));
  }

  /** How long the charts look back: what the points cover, a minute at least, KEEP_MS at most. */
  function span(points) {
    if (points.length < 2) return MIN_SPAN_MS;
    return Math.min(KEEP_MS, Math.max(MIN_SPAN_MS, points[points.length - 1].t - points[0].t));
  }
  const duration = (ms) => ms >= 120000 ? Math.round(ms / 60000) + " minutes" : Math.round(ms / 1000) + " s";

  /** series: [key of a point, class of its line, its name in the caption]. */
  function chart(caption, points, series, max) {
    const w = 300, h = 48;
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("viewBox", "0 0 " + w + " " + h);
    svg.setAttribute("preserveAspectRatio", "none");
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", caption + ": " + series.map((s) => s[2]).join(", "));
    const top = Math.max(1, max);
    if (points.length < 2) {
      // Nothing to draw yet: say so rather than show an empty box.
      return el("figure", { className: "chart" }, el("p", { className: "collecting" }, "collecting…"),
        el("figcaption", {}, caption, ...series.map(([, cls, label]) => el("span", { className: "key" }, el("span", { className: "line " + cls }), label))));
    }
    {
      const ms = span(points);
      const t0 = points[points.length - 1].t - ms;
      for (const [key, cls] of series) {
        const d = points.filter((p) => p.t >= t0).map((p, i) => (i ? "L" : "M") + (((p.t - t0) / ms) * w).toFixed(1) + " " + (h - 2 - (p[key] / top) * (h - 4)).toFixed(1)).join(" ");
        const path = document.createElementNS(SVG, "path");
        path.setAttribute("d", d);
        path.setAttribute("class", cls);
        svg.append(path);
      }
    }
    // Each line's key is drawn with the style sheet's colours (they change in dark mode); the
    // scale is the value at the top of the chart.
    const keys = series.map(([, cls, label]) => el("span", { className: "key" }, el("span", { className: "line " + cls }), label));
    return el("figure", { className: "chart" }, svg,
      el("figcaption", {}, caption, ...keys, el("span", { className: "top" }, "top " + fmt(top))));
  }

  function charts(name) {
    const points = history.get(name) || [];
    const peak = (keys) => points.reduce((m, p) => Math.max(m, ...keys.map((k) => p[k])), 0);
    return el("div", { className: "charts" },
      chart("seats", points, [["limit", "s-limit", "limit"], ["seatsInUse", "s-in-use", "in use"]], peak(["limit", "seatsInUse"])),
      chart("requests", points, [["waiting", "s-waiting", "waiting"]], peak(["waiting"])),
      chart("per second", points, [["dispatched", "s-dispatched", "dispatched"], ["rejected", "s-rejected", "rejected"]], peak(["dispatched", "rejected"])));
  }

  /** The learned server concurrency limit: its chart against the seats in use, and its state. */
  function server(a) {
    const rtt = (v) => v === null ? "–" : v === "+Inf" ? "+Inf (refusals)" : fmt(v, 1) + " ms";
    const points = adaptiveHistory;
    const peak = points.reduce((m, p) => Math.max(m, p.limit, p.seatsInUse), 0);
    const bounds = a.min === null || a.max === null ? "" : " · bounds " + a.min + "–" + a.max;
    return el("article", { className: "server", id: "server-limit" },
      el("header", {}, el("h2", {}, "Server concurrency"), el("span", { className: "tag" }, "learned limit")),
      el("p", { className: "caption" }, a.seatsInUse + " / " + a.limit +
        " seats in use over the limited levels · estimate " + fmt(a.estimate, 2) + bounds),
      el("dl", { className: "numbers" },
        number("phase", a.phase),
        number("minRTT", rtt(a.minRttMs)),
        number("sampleRTT", rtt(a.sampleRttMs), a.sampleRttMs === "+Inf"),
        // Not marked below 1: at its fixed point the limit holds with a gradient a little under 1.
        number("gradient", fmt(a.gradient, 2)),
        number("sample windows", fmt(a.windows, 0)),
        number("minRTT measurements", fmt(a.minRttMeasurements, 0))),
      el("h3", {}, "Last " + duration(span(points))),
      el("div", { className: "charts one" },
        chart("server concurrency: learned limit vs seats in use", points,
          [["limit", "s-limit", "learned limit"], ["seatsInUse", "s-in-use", "seats in use"]], peak)));
  }

  /** "at" is the sample's time on the server's wall clock, as leaseEndsAt is (not this browser's). */
  function budget(b, at) {
    if (!b) return [];
    const left = b.leaseEndsAt === null ? "–" : fmt(Math.max(0, (b.leaseEndsAt - at) / 1000), 1) + " s";
    return [el("h3", {}, "Seat budget of this holder"), el("dl", { className: "numbers" },
      number("level limit", fmt(b.limit, 0) + " seats"),
      number("fair share", fmt(b.target, 0) + " seats"),
      number("claimed", fmt(b.claim, 0) + " seats"),
      number("may use", fmt(b.capacity, 0) + " seats"),
      number("mode", b.mode, b.mode !== "budget"),
      number("lease left", left)),
      table("Holders of this level (the ledger as this holder last wrote it)", ["holder", "demand", "claim"],
        (b.holders || []).map((h) => [h.id + (h.self ? " (this one)" : ""), fmt(h.demand, 0), fmt(h.claim, 0)]))];
  }

  function card(level, at) {
    const l = level.limits;
    const rejected = sum(level.rejectedPerSecond);
    const full = level.type !== "Exempt" && level.seatsInUse >= l.current && l.current > 0;
    const w = level.waitSeconds;
    const flows = (list, key) => list.map((f) => [f.flowSchema, f.distinguisher || "–", fmt(f[key], 0)]);
    return el("article", { className: "level", "data-level": level.name, id: "level-" + level.name },
      el("header", {}, el("h2", {}, level.name),
        el("span", { className: full ? "tag full" : "tag" }, level.type + (level.quiescing ? ", removed (draining)" : "") + (full ? ", FULL" : ""))),
      level.type === "Exempt" ? el("p", { className: "caption" }, level.seatsInUse + " seats in use (exempt: no limit)") : bar(level),
      level.type === "Exempt" ? "" : el("p", { className: "caption" },
        level.seatsInUse + " / " + l.current + " seats in use · nominal " + l.nominal +
        " · lent " + l.lent + " · borrowed " + l.borrowed + " · range " + l.lower + "–" + l.upper),
      el("dl", { className: "numbers" },
        number("requests waiting", fmt(level.waiting, 0)),
        number("executing", fmt(level.executing, 0)),
        number("dispatched /s", fmt(level.dispatchedPerSecond)),
        number("rejected /s", fmt(rejected), rejected > 0),
        ...REASONS.map((r) => number(r + " /s", fmt(level.rejectedPerSecond ? level.rejectedPerSecond[r] : null), level.rejectedPerSecond && level.rejectedPerSecond[r] > 0)),
        number("Retry-After", level.retryAfterSeconds === null ? "–" : level.retryAfterSeconds + " s"),
        number("wait p50", w ? ms(w.p50) : "–"),
        number("wait p99", w ? ms(w.p99) : "–"),
        number("waits counted", w ? fmt(w.count, 0) : "0")),
      el("h3", {}, "Queues (" + level.queues.length + ")"), strip(level),
      table("Top flows by seats in use", ["flow schema", "distinguisher", "seats"], flows(level.topBySeats, "seatsInUse")),
      table("Top flows by requests waiting", ["flow schema", "distinguisher", "waiting"], flows(level.topByWaiting, "waiting")),
      table("Flow schemas rejected most", ["flow schema", "reasons", "rejected /s"],
        level.topRejecting.map((r) => [r.flowSchema, REASONS.filter((x) => r.byReason[x] > 0).join(", "), fmt(r.perSecond)])),
      ...budget(level.budget, at),
      el("h3", {}, "Last " + duration(span(history.get(level.name) || []))), charts(level.name));
  }

  function remember(frame) {
    if (frame.history) {
      for (const [name, points] of Object.entries(frame.history)) history.set(name, points.slice());
      adaptiveHistory = (frame.adaptiveHistory || []).slice();
      return;
    }
    const a = frame.adaptive;
    if (a) {
      const last = adaptiveHistory[adaptiveHistory.length - 1];
      if (!last || last.t !== frame.atMs) adaptiveHistory.push({ t: frame.atMs, limit: a.limit, seatsInUse: a.seatsInUse });
      while (adaptiveHistory.length && adaptiveHistory[0].t < frame.atMs - KEEP_MS) adaptiveHistory.shift();
    }
    for (const level of frame.levels) {
      const points = history.get(level.name) || [];
      const last = points[points.length - 1];
      if (!last || last.t !== frame.atMs) {
        points.push({ t: frame.atMs, limit: level.limits.current, seatsInUse: level.seatsInUse, waiting: level.waiting,
          dispatched: level.dispatchedPerSecond || 0, rejected: sum(level.rejectedPerSecond) || 0 });
      }
      while (points.length && points[0].t < frame.atMs - KEEP_MS) points.shift();
      history.set(level.name, points);
    }
  }

  /** A level is busy when its seats are full, or requests wait, or some are rejected. */
  function busy(level) {
    return level.type !== "Exempt" && (level.seatsInUse >= level.limits.current && level.limits.current > 0 ||
      level.waiting > 0 || (sum(level.rejectedPerSecond) || 0) > 0);
  }

  /** One line of every level, busy ones marked, each a link to its card: the page's first screen. */
  function summary(levels) {
    return levels.map((level) => {
      const rejected = sum(level.rejectedPerSecond) || 0;
      const text = level.type === "Exempt"
        ? level.seatsInUse + " in use (exempt)"
        : level.seatsInUse + "/" + level.limits.current + " seats · " + level.waiting + " waiting" + (rejected > 0 ? " · " + fmt(rejected) + " rejected/s" : "");
      return el("a", { className: busy(level) ? "chip busy" : "chip", href: "#level-" + level.name },
        el("strong", {}, level.name), " ", text);
    });
  }

  function draw(frame) {
    remember(frame);
    document.getElementById("summary").replaceChildren(...summary(frame.levels));
    const learned = document.getElementById("server");
    learned.hidden = !frame.adaptive;
    learned.replaceChildren(...(frame.adaptive ? [server(frame.adaptive)] : []));
    document.getElementById("levels").replaceChildren(...frame.levels.map((l) => card(l, frame.atMs)));
    const status = document.getElementById("status");
    status.className = "";
    status.textContent = frame.levels.length + " priority levels · server limit " + frame.serverConcurrencyLimit +
      " seats" + (frame.adaptive ? " (learned)" : "") + " · updated " + new Date(frame.atMs).toLocaleTimeString("en-GB");
  }

  async function poll(first) {
    try {
      const res = await fetch(first ? "live?history=1" : "live", { credentials: "same-origin", cache: "no-store" });
      if (!res.ok) throw new Error("HTTP " + res.status + (res.status === 403 ? ": not authorized (reload the page to sign in)" : ""));
      draw(await res.json());
      lastOk = Date.now();
      first = false;
    } catch (error) {
      const status = document.getElementById("status");
      status.className = "stale";
      status.textContent = "No update" + (lastOk ? " since " + new Date(lastOk).toLocaleTimeString("en-GB") : "") + ": " + error.message;
    }
    setTimeout(() => poll(first), POLL_MS);
  }

  poll(true);
})();
`;
