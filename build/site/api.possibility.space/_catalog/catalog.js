// The catalog pages' script, _catalog/catalog.js of each served tree. It
// reads window.KNOC_CATALOG (each host's index.js and agents.js) and writes
// text nodes only: never HTML from the data, and links only to http(s)
// urls or paths knoc made.
"use strict";
(function () {
  const data = window.KNOC_CATALOG || { index: { agents: [] }, details: {} };
  const byslug = new Map(data.index.agents.map((a) => [a.slug, a]));
  const root = document.body.dataset.root || "";  // the host this tree serves; "" for every host's
  function cardPath(a) {  // a card's path in this tree
    return root && a.card.startsWith(root + "/") ? a.card.slice(root.length + 1) : a.card;
  }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    for (const c of children) if (c !== null && c !== undefined) node.append(c);
    return node;
  }
  function link(url, text) {
    return /^https?:\/\//i.test(url) ? el("a", { href: url }, text || url) : el("span", {}, text || url);
  }
  function row(dl, term, ...value) {
    dl.append(el("dt", {}, term), el("dd", {}, ...value));
  }
  function list(items, render) {
    const ul = el("ul", { class: "inline" });
    for (const i of items) ul.append(el("li", {}, render ? render(i) : i));
    return items.length ? ul : "none";
  }
  function endpoint(i) {
    const versions = i.versions.length ? " (A2A " + i.versions.join(", ") + ")" : "";
    return el("span", {}, el("code", {}, i.url), " ", el("span", { class: "binding" }, i.binding), versions);
  }
  function skills(items, full) {
    if (!items.length) return el("p", {}, "No skill declared.");
    const ul = el("ul", { class: "skills" });
    for (const s of items) {
      const li = el("li", {}, el("strong", {}, s.name), " ", el("span", {}, s.description));
      if (full && s.tags.length) li.append(el("div", { class: "tags" }, list(s.tags, (t) => el("code", {}, t))));
      if (full && s.examples.length) li.append(el("div", { class: "examples" }, "e.g. ", list(s.examples, (e) => el("q", {}, e))));
      ul.append(li);
    }
    return ul;
  }

  function fillCatalog() {
    for (const li of document.querySelectorAll("li.agent")) {
      const d = data.details[li.dataset.slug];
      if (!d) continue;
      li.querySelector(".description").textContent = d.description;
      const dl = el("dl");
      row(dl, "Endpoint", endpoint(d.interfaces[0]));
      if (d.interfaces.length > 1) row(dl, "Also at", list(d.interfaces.slice(1), endpoint));
      row(dl, "Version", d.version);
      row(dl, "Capabilities", list(d.capabilities));
      li.querySelector("dl.details").prepend(...dl.childNodes);
      const old = li.querySelector(".skill-names");
      old.replaceWith(el("dd", { class: "skill-names" }, skills(d.skills, false)));
    }
    const box = document.getElementById("search");
    const count = document.getElementById("shown");
    const items = Array.from(document.querySelectorAll("li.agent"));
    function filter() {
      const words = box.value.toLowerCase().split(/\s+/).filter(Boolean);
      let shown = 0;
      for (const li of items) {
        const hit = words.every((w) => li.textContent.toLowerCase().includes(w));
        li.hidden = !hit;
        shown += hit ? 1 : 0;
      }
      count.textContent = words.length ? shown + " of " + items.length + " agents match" : "";
    }
    box.parentElement.hidden = false;
    box.value = new URLSearchParams(location.search).get("q") || "";
    box.addEventListener("input", filter);
    filter();
  }

  function fillAgent() {
    const main = document.querySelector("main");
    const slug = decodeURIComponent(location.hash.slice(1));
    const a = byslug.get(slug), d = data.details[slug];
    main.replaceChildren();
    if (!a || !d) {
      document.title = "Unknown agent";
      main.append(el("h1", {}, "Unknown agent"), el("p", {}, "No public agent is called ", el("code", {}, slug), "."));
      return;
    }
    document.title = a.name + " - Agent catalog";
    main.append(el("h1", {}, a.name), el("p", { class: "description" }, d.description));
    const dl = el("dl", { class: "card" });
    row(dl, "Slug", el("code", {}, a.slug));
    row(dl, "Id", el("code", {}, a.id));
    row(dl, "Version", d.version);
    if (d.provider) row(dl, "Provider", d.provider);
    if (d.documentation) row(dl, "Documentation", link(d.documentation));
    row(dl, "Service class", el("span", { class: "class " + a.service_class.source }, a.service_class.class),
        " (" + a.service_class.source + ")");
    row(dl, "Interfaces", list(d.interfaces, endpoint));
    row(dl, "Capabilities", list(d.capabilities));
    row(dl, "Security schemes", list(d.security, (s) => el("code", {}, s)));
    row(dl, "Input", list(d.modes.input, (m) => el("code", {}, m)));
    row(dl, "Output", list(d.modes.output, (m) => el("code", {}, m)));
    row(dl, "Perception domains", list(a.domains, (x) => el("a", { href: "../index.html#domain-" + x }, x)));
    row(dl, "Card", el("a", { href: "../" + cardPath(a) }, a.url.replace(/\/$/, "") + "/.well-known/agent-card.json"));
    main.append(dl, el("h2", {}, "Skills"), skills(d.skills, true));
  }

  document.addEventListener("DOMContentLoaded", () => {
    if (document.body.dataset.page === "agent") {
      fillAgent();
      window.addEventListener("hashchange", fillAgent);
    } else {
      fillCatalog();
    }
  });
})();
