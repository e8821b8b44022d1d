// kgrag serve's web page: one script, no framework, no network but this
// server. Every path renders from the JSON API; links are plain links.
"use strict";

const main = document.getElementById("main");

// el builds an element: el("a", {href: "/"}, "text", child...).
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else if (k.startsWith("on")) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
  }
  for (const c of children) if (c != null) e.append(c);
  return e;
}

function setMain(...children) { main.replaceChildren(...children); }

// The API key, when the server wants one, is asked once and kept in this
// browser's local storage.
function authHeaders() {
  const key = localStorage.getItem("kgrag-key");
  return key ? { Authorization: "Bearer " + key } : {};
}

async function api(path, opts = {}, retried = false) {
  const resp = await fetch(path, { ...opts, headers: { ...(opts.headers || {}), ...authHeaders() } });
  if (resp.status === 401 && !retried) {
    const key = prompt("This kgrag server wants an API key:");
    if (key) { localStorage.setItem("kgrag-key", key); return api(path, opts, true); }
  }
  return resp;
}

async function apiJSON(path) {
  const resp = await api(path);
  const body = await resp.json();
  if (!resp.ok) throw new Error(body.error ? body.error.message : resp.statusText);
  return body;
}

function fail(err) { setMain(el("p", { class: "error" }, String(err.message || err))); }

const pages = { entity: "/entity/", community: "/community/", source: "/text-unit/" };

// pageOf is this page's link for a citation of the API.
function pageOf(c) {
  switch (c.kind) {
    case "entity": return pages.entity + encodeURIComponent(c.record_id);
    case "report": return pages.community + encodeURIComponent(c.id);
    case "source": return pages.source + encodeURIComponent(c.record_id);
    case "relationship": return c.url.replace("/api/entities/", pages.entity);
  }
  return c.url;
}

// ---- ask ----------------------------------------------------------------

const conversation = []; // this page's conversation: {role, content}

function askPage() {
  const q = el("textarea", { id: "question", placeholder: "Ask the graph a question…", "aria-label": "Question" });
  const mode = el("select", { id: "mode", "aria-label": "Mode" }, el("option", { value: "local" }, "local"));
  // The modes are the server's models (kgrag-local, ...), one per mode it
  // answers: a mode added to kgrag appears here without a change.
  apiJSON("/v1/models").then((list) => {
    mode.replaceChildren(...list.data.map((m) => {
      const name = m.id.replace(/^kgrag-/, "");
      return el("option", { value: name, title: m.description || "", ...(name === "local" ? { selected: "" } : {}) }, name);
    }));
  }).catch(() => {});
  const btn = el("button", { id: "ask", type: "submit" }, "Ask");
  const turns = el("div", { id: "turns" });
  const form = el("form", { onsubmit: (ev) => { ev.preventDefault(); ask(q, mode.value, btn, turns); } }, q, el("div", { class: "row" }, mode, btn));
  setMain(el("h1", {}, "Ask"), form, turns);
  q.focus();
}

async function ask(q, mode, btn, turns) {
  const text = q.value.trim();
  if (!text) return;
  btn.disabled = true;
  const answer = el("div", { class: "answer", "aria-live": "polite" });
  const cites = el("ul", { class: "citations" });
  const turn = el("div", { class: "turn" }, el("div", { class: "q" }, text), answer, cites);
  turns.prepend(turn);
  const messages = [...conversation, { role: "user", content: text }];
  let got = "";
  try {
    const resp = await api("/v1/chat/completions", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ model: "kgrag-" + mode, stream: true, messages }),
    });
    if (!resp.ok) {
      const body = await resp.json();
      throw new Error(body.error ? body.error.message : resp.statusText);
    }
    let final = null;
    await readEvents(resp, (ev) => {
      if (ev.error) throw new Error(ev.error.message);
      const ch = ev.choices && ev.choices[0];
      if (ch && ch.delta && ch.delta.content) { got += ch.delta.content; answer.textContent = got; }
      if (ev.kgrag) final = ev.kgrag;
    });
    if (final) showCitations(answer, cites, got, final.citations || []);
    conversation.push({ role: "user", content: text }, { role: "assistant", content: got });
    q.value = "";
  } catch (err) {
    answer.append(el("div", { class: "error" }, String(err.message || err)));
  } finally {
    btn.disabled = false;
  }
}

// readEvents reads a server-sent event stream, handing each data object
// to f, until [DONE] or the end.
async function readEvents(resp, f) {
  const reader = resp.body.getReader();
  const dec = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      for (const line of block.split("\n")) {
        if (!line.startsWith("data: ")) continue;
        const data = line.slice(6);
        if (data === "[DONE]") return;
        f(JSON.parse(data));
      }
    }
  }
}

// showCitations lists the records cited, and turns the ids in the
// answer's "[Data: ...]" markers into links to them.
function showCitations(answer, list, text, citations) {
  const byKey = new Map(citations.map((c) => [c.kind + "/" + c.id, c]));
  const kinds = { entities: "entity", relationships: "relationship", sources: "source", reports: "report" };
  answer.replaceChildren();
  let last = 0;
  for (const m of text.matchAll(/\[Data:[^\]]*\]/g)) {
    answer.append(text.slice(last, m.index));
    let marker = m[0], pos = 0;
    for (const g of marker.matchAll(/([A-Za-z ]+?)\s*\(([^)]*)\)/g)) {
      const kind = kinds[g[1].trim().toLowerCase()];
      const idsAt = g.index + g[0].indexOf("(") + 1;
      answer.append(marker.slice(pos, idsAt));
      g[2].split(",").forEach((raw, n) => {
        if (n > 0) answer.append(",");
        const id = raw.trim(), c = byKey.get(kind + "/" + id);
        const lead = raw.slice(0, raw.indexOf(id));
        answer.append(lead);
        answer.append(c ? el("a", { href: pageOf(c), class: "cite", title: c.title || c.kind }, id) : id);
      });
      pos = idsAt + g[2].length;
    }
    answer.append(marker.slice(pos));
    last = m.index + m[0].length;
  }
  answer.append(text.slice(last));
  for (const c of citations) {
    list.append(el("li", {}, c.kind + " " + c.id + ": ", el("a", { href: pageOf(c), class: "citation" }, c.title || c.record_id)));
  }
}

// ---- records ------------------------------------------------------------

async function entityPage(id) {
  const e = await apiJSON("/api/entities/" + encodeURIComponent(id));
  document.title = e.title + " · kgrag";
  const rels = el("table", {}, el("tr", {}, el("th", {}, "with"), el("th", {}, "relationship"), el("th", {}, "weight")));
  for (const r of e.relationships) {
    const otherID = r.source_id === e.id ? r.target_id : r.source_id;
    const other = r.source_id === e.id ? r.target : r.source;
    rels.append(el("tr", { id: "rel-" + r.human_readable_id }, el("td", {}, el("a", { href: pages.entity + encodeURIComponent(otherID) }, other)),
      el("td", {}, r.description), el("td", {}, String(r.weight))));
  }
  const comms = el("ul", { class: "list" });
  for (const c of e.communities) comms.append(el("li", {}, el("a", { href: pages.community + encodeURIComponent(c.community) }, c.title || "community " + c.community), " (level " + c.level + ")"));
  const units = el("div", {});
  for (const u of e.text_units) units.append(el("details", {}, el("summary", {}, "text unit " + u.human_readable_id), el("div", { class: "text" }, u.text)));
  setMain(
    el("h1", {}, e.title),
    el("p", {}, "IRI in the store: ", e.iri ? el("code", { class: "iri" }, e.iri) : el("span", { class: "muted" }, "unknown")),
    el("p", { class: "muted" }, "id " + e.id + " · " + e.degree + " relationships · ", el("a", { href: "/graph/" + encodeURIComponent(e.id), id: "neighbourhood" }, "neighbourhood graph")),
    el("p", { class: "text" }, e.description),
    el("h2", {}, "Relationships (" + e.relationships.length + ")"), rels,
    el("h2", {}, "Communities"), comms,
    el("h2", {}, "Text units"), units);
}

async function communityPage(n) {
  const c = await apiJSON("/api/communities/" + encodeURIComponent(n));
  document.title = c.title + " · kgrag";
  const kids = el("ul", { class: "list" });
  for (const k of c.children) kids.append(el("li", {}, el("a", { href: pages.community + encodeURIComponent(k) }, "community " + k)));
  setMain(el("h1", {}, c.title),
    el("p", { class: "muted" }, "community " + c.community + " · level " + c.level + " · rank " + c.rank,
      c.parent ? el("span", {}, " · parent ", el("a", { href: pages.community + encodeURIComponent(c.parent) }, c.parent)) : null),
    el("p", {}, c.summary), el("h2", {}, "Report"), el("div", { class: "text" }, c.full_content),
    c.children.length ? el("h2", {}, "Sub-communities") : null, c.children.length ? kids : null);
}

async function textUnitPage(id) {
  const u = await apiJSON("/api/text-units/" + encodeURIComponent(id));
  setMain(el("h1", {}, "Text unit " + u.human_readable_id), el("p", { class: "muted" }, u.n_tokens + " tokens · id " + u.id), el("div", { class: "text" }, u.text));
}

async function searchPage(q) {
  const r = await apiJSON("/api/entities?q=" + encodeURIComponent(q) + "&k=20");
  const list = el("ol", { class: "list" });
  for (const e of r.entities) list.append(el("li", {}, el("a", { href: pages.entity + encodeURIComponent(e.id) }, e.title), " ", el("span", { class: "muted" }, e.description.slice(0, 160))));
  setMain(el("h1", {}, "Entities near “" + q + "”"), list);
}

// graphPage draws an entity's neighbourhood: the entity, the ends of its
// strongest relationships, and the relationships among them.
async function graphPage(id) {
  const e = await apiJSON("/api/entities/" + encodeURIComponent(id));
  document.title = e.title + " (neighbourhood) · kgrag";
  const rels = [...e.relationships].sort((a, b) => b.weight - a.weight).slice(0, 40);
  const nodes = new Map([[e.id, { data: { id: e.id, label: e.title, centre: 1 } }]]);
  for (const r of rels) {
    for (const [nid, label] of [[r.source_id, r.source], [r.target_id, r.target]]) {
      if (!nodes.has(nid)) nodes.set(nid, { data: { id: nid, label } });
    }
  }
  const edges = rels.map((r) => ({ data: { id: "r" + r.id, source: r.source_id, target: r.target_id, weight: r.weight, label: r.description } }));
  const box = el("div", { id: "cy", role: "img", "aria-label": "neighbourhood of " + e.title });
  setMain(el("h1", {}, "Neighbourhood of ", el("a", { href: pages.entity + encodeURIComponent(e.id) }, e.title)),
    el("p", { class: "muted" }, nodes.size + " entities, " + edges.length + " relationships (the strongest " + edges.length + " of " + e.relationships.length + "); click an entity to open it"), box);
  const cy = cytoscape({
    container: box, elements: [...nodes.values(), ...edges],
    style: [
      { selector: "node", style: { label: "data(label)", "font-size": 9, "background-color": "#7a9ce0", width: 16, height: 16,
        "text-background-color": "#fff", "text-background-opacity": 0.8, "text-background-padding": 1, "text-valign": "bottom" } },
      { selector: "node[centre]", style: { "background-color": "#2457c5", width: 30, height: 30, "font-weight": "bold" } },
      { selector: "edge", style: { width: "mapData(weight, 0, 20, 1, 6)", "line-color": "#c3cbd9", "curve-style": "bezier" } },
    ],
    layout: { name: "cose", animate: false, randomize: false, nodeRepulsion: () => 60000, idealEdgeLength: () => 110, nodeOverlap: 40 },
  });
  cy.on("tap", "node", (ev) => { location.href = pages.entity + encodeURIComponent(ev.target.id()); });
  box.dataset.nodes = String(cy.nodes().length);
  box.dataset.ready = "1";
}

// ---- routes -------------------------------------------------------------

async function route() {
  fetch("/readyz").then((r) => r.json()).then((r) => { document.getElementById("graph-name").textContent = r.graph; }).catch(() => {});
  const p = decodeURIComponent(location.pathname);
  const after = (prefix) => p.slice(prefix.length);
  try {
    if (p === "/" || p === "") askPage();
    else if (p.startsWith(pages.entity)) await entityPage(after(pages.entity));
    else if (p.startsWith(pages.community)) await communityPage(after(pages.community));
    else if (p.startsWith(pages.source)) await textUnitPage(after(pages.source));
    else if (p.startsWith("/graph/")) await graphPage(after("/graph/"));
    else if (p === "/search") await searchPage(new URLSearchParams(location.search).get("q") || "");
    else setMain(el("p", { class: "error" }, "No page " + p));
  } catch (err) {
    fail(err);
  }
}

route();
