"use strict";
/* Herald's web chat: chats over Server-Sent Events, the dashboard, memory and skills.
   All text from the server goes through textContent or HeraldMarkdown.render (which
   escapes first); nothing is ever inserted as raw HTML. */
(function () {
  const base = document.querySelector('meta[name="base"]').content;
  const md = window.HeraldMarkdown;
  const $ = (id) => document.getElementById(id);
  const state = { csrf: "", chatId: null, source: null, running: false, stream: null, live: null, statusIds: new Set(), pending: [] };

  // ---- helpers -------------------------------------------------------------------------
  async function api(path, options = {}) {
    const headers = Object.assign({}, options.headers || {});
    if (options.method && options.method !== "GET") headers["X-CSRF-Token"] = state.csrf;
    if (options.json !== undefined) {
      headers["Content-Type"] = "application/json";
      options.body = JSON.stringify(options.json);
    }
    const response = await fetch(base + path, Object.assign({}, options, { headers, credentials: "same-origin" }));
    if (response.status === 401) { window.location.assign(base + "/login"); throw new Error("not logged in"); }
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(body.error || ("request failed (" + response.status + ")"));
    return body;
  }
  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function newChatId() {
    const bytes = new Uint8Array(12);
    crypto.getRandomValues(bytes);
    return "c" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }
  function money(value) { return "$" + (value || 0).toFixed(value >= 1 ? 2 : 4); }
  function when(seconds) { return new Date(seconds * 1000).toLocaleString(); }
  function scrollDown() { const box = $("messages"); box.scrollTop = box.scrollHeight; }

  // ---- tabs and theme ------------------------------------------------------------------
  function showTab(name) {
    document.querySelectorAll("[role=tab]").forEach((tab) => tab.setAttribute("aria-selected", String(tab.dataset.tab === name)));
    document.querySelectorAll(".tab-panel").forEach((panel) => { panel.hidden = panel.id !== "tab-" + name; });
    if (name === "dashboard") loadDashboard();
    if (name === "memory") loadMemory();
    if (name === "jobs") loadJobs();
    if (name === "board") loadBoard();
    if (name === "agents") loadAgents();
  }
  document.querySelectorAll("[role=tab]").forEach((tab) => tab.addEventListener("click", () => showTab(tab.dataset.tab)));
  function applyTheme(theme) { document.documentElement.dataset.theme = theme; }
  applyTheme(localStorage.getItem("herald-theme") || (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light"));
  $("theme-button").addEventListener("click", () => {
    const next = document.documentElement.dataset.theme === "dark" ? "light" : "dark";
    localStorage.setItem("herald-theme", next);
    applyTheme(next);
  });
  $("menu-button").addEventListener("click", () => $("sidebar").classList.toggle("open"));
  $("logout-button").addEventListener("click", async () => {
    await api("/logout", { method: "POST" }).catch(() => {});
    window.location.assign(base + "/login");
  });

  // ---- chat list -----------------------------------------------------------------------
  let chatsRequest = 0;
  async function loadChats() {
    const q = $("search").value.trim();
    const mine = ++chatsRequest;
    let body;
    try {
      body = await api("/api/chats" + (q ? "?q=" + encodeURIComponent(q) : ""));
    } catch (error) {
      if (mine !== chatsRequest) return;
      $("chat-list").replaceChildren(el("li", "notice error", (q ? "Search failed: " : "Could not load the chats: ") + error.message));
      return;
    }
    if (mine !== chatsRequest) return;  // a newer list (another search) is on its way
    const list = $("chat-list");
    list.replaceChildren();
    if (!body.chats.length) list.append(el("li", "muted", q ? "No session matches." : "No chats yet."));
    for (const chat of body.chats) {
      const item = el("li", "chat-item" + (chat.chat_id && chat.chat_id === state.chatId ? " active" : ""));
      const button = el("button", "chat-link");
      button.append(el("span", "chat-title", chat.title || "New chat"));
      if (chat.snippet) button.append(el("span", "chat-snippet", chat.snippet.replace(/<\/?b>/g, "")));
      button.append(el("span", "chat-meta muted", when(chat.updated_at) + (chat.source && chat.source !== "web" ? " · " + chat.source : "")));
      button.addEventListener("click", () => {
        $("sidebar").classList.remove("open");
        if (chat.chat_id) openChat(chat.chat_id); else openSession(chat.session_id);
      });
      item.append(button);
      list.append(item);
    }
  }
  let searchTimer = null;
  $("search").addEventListener("input", () => { clearTimeout(searchTimer); searchTimer = setTimeout(loadChats, 250); });
  $("new-chat").addEventListener("click", () => { $("sidebar").classList.remove("open"); openChat(newChatId()); });

  // ---- rendering a transcript ----------------------------------------------------------
  function bubble(role, text) {
    const node = el("div", "msg " + role);
    const body = el("div", "msg-body");
    if (role === "user") body.textContent = text; else body.innerHTML = md.render(text);
    node.append(body);
    return node;
  }
  function toolStep(call, result) {
    const details = el("details", "tool-step");
    const summary = el("summary", null, "⚙ " + (call.name || "tool"));
    details.append(summary);
    details.append(el("pre", "tool-args", call.arguments || ""));
    if (result) details.append(el("pre", "tool-result" + (result.text.startsWith("[TOOL_ERROR]") ? " error" : ""), result.text));
    return details;
  }
  function renderTranscript(messages) {
    const box = $("messages");
    box.replaceChildren();
    const results = new Map(messages.filter((m) => m.role === "tool").map((m) => [m.tool_call_id, m]));
    for (const m of messages) {
      if (m.role === "user") box.append(bubble("user", m.text));
      else if (m.role === "assistant") {
        if (m.text) box.append(bubble("assistant", m.text));
        for (const call of m.tool_calls || []) box.append(toolStep(call, results.get(call.id)));
      }
    }
    if (!messages.length) box.append(el("p", "empty muted", "Ask Herald anything. Replies stream in here."));
    scrollDown();
  }
  function renderStatus(status) {
    const line = $("chat-status");
    if (!status) { line.textContent = ""; return; }
    line.textContent = [status.model, (status.prompt_tokens + status.completion_tokens) + " tokens",
      status.api_calls + (status.api_calls === 1 ? " call" : " calls"), money(status.cost_usd), "cache " + Math.round((status.cache_hit_rate || 0) * 100) + "%"]
      .filter(Boolean).join(" · ");
  }
  function setRunning(running) {
    state.running = running;
    $("stop").hidden = !running;
    $("send").textContent = running ? "Steer" : "Send";
    $("send").title = running ? "Add this to the running turn" : "Send";
  }

  // ---- opening a chat and following its events -----------------------------------------
  async function openChat(chatId) {
    state.chatId = chatId;
    state.live = null;
    history.replaceState(null, "", base + "/#" + chatId);
    const snapshot = await api("/api/chats/" + chatId);
    renderTranscript(snapshot.messages);
    renderStatus(snapshot.status);
    setRunning(snapshot.running);
    $("composer").hidden = false;
    follow(chatId, snapshot.last_event_id);
    loadChats();
    $("input").focus();
  }
  async function openSession(sessionId) {
    if (state.stream) state.stream.close();
    state.chatId = null;
    const body = await api("/api/sessions/" + encodeURIComponent(sessionId));
    renderTranscript(body.messages);
    renderStatus(body.status);
    $("composer").hidden = true;
    $("messages").prepend(el("p", "notice", "A session from another entrance: read-only here."));
  }
  function follow(chatId, after) {
    if (state.stream) state.stream.close();
    const source = new EventSource(base + "/api/chats/" + chatId + "/events?after=" + after);
    state.stream = source;
    const on = (kind, handler) => source.addEventListener(kind, (event) => {
      if (state.chatId !== chatId) return;
      handler(JSON.parse(event.data));
    });
    on("turn", (data) => {
      const empty = $("messages").querySelector(".empty");
      if (empty) empty.remove();
      const names = (data.files || []).map((name) => "📎 " + name).join("\n");
      $("messages").append(bubble("user", [data.text, names].filter(Boolean).join("\n")));
      setRunning(true);
      scrollDown();
    });
    on("delta", (data) => {
      if (!state.live) {
        state.live = { text: "", node: bubble("assistant", "") };
        state.live.node.classList.add("streaming");
        $("messages").append(state.live.node);
      }
      state.live.text += data.text;
      state.live.node.firstChild.innerHTML = md.render(state.live.text);
      scrollDown();
    });
    on("message", (data) => showMessage(data));
    on("file", (data) => { $("messages").append(sentFile(data)); scrollDown(); });
    on("edit", (data) => {
      const node = document.querySelector('[data-message-id="' + CSS.escape(data.id) + '"] .msg-body');
      if (node) node.textContent = data.text;
    });
    on("notice", (data) => { if (data.text) { $("messages").append(el("p", "notice", data.text)); scrollDown(); } });
    on("done", async (data) => {
      state.live = null;
      setRunning(false);
      if (data.status === "error" && data.text) $("messages").append(el("p", "notice error", data.text));
      const snapshot = await api("/api/chats/" + chatId);
      const last = Array.from($("messages").querySelectorAll(".status")).pop();
      const files = Array.from($("messages").querySelectorAll(".file-out"));
      renderTranscript(snapshot.messages);
      if (last) $("messages").append(last);
      files.forEach((node) => $("messages").append(node));
      renderStatus(snapshot.status);
      loadChats();
    });
  }
  function sentFile(data) {
    // A file Herald sent to this chat: a spoken reply plays here, an image shows.
    const node = el("div", "msg assistant file-out");
    const url = data.url;
    if ((data.mime || "").startsWith("audio/")) {
      const audio = document.createElement("audio");
      audio.controls = true;
      audio.src = url;
      node.append(el("div", "muted", data.voice ? "🔊 spoken reply" : data.name), audio);
    } else if ((data.mime || "").startsWith("image/")) {
      const image = document.createElement("img");
      image.src = url;
      image.alt = data.name;
      node.append(image);
    } else {
      const link = el("a", "", "📎 " + data.name);
      link.href = url;
      link.download = data.name;
      node.append(link);
    }
    if (data.caption) node.append(el("div", "msg-body", data.caption));
    return node;
  }
  function showMessage(data) {
    const text = data.text || "";
    if (text.startsWith("⚙")) {
      const node = el("div", "status msg");
      node.dataset.messageId = data.id;
      node.append(el("div", "msg-body", text));
      $("messages").append(node);
      scrollDown();
      return;
    }
    if (data.buttons && data.buttons.length) {
      const node = el("div", "msg assistant prompt");
      node.dataset.messageId = data.id;
      node.append(el("pre", "prompt-text", text));
      const row = el("div", "prompt-buttons");
      data.buttons.flat().forEach((b) => {
        const button = el("button", b.data.startsWith("/deny") ? "danger" : "primary", b.label);
        button.addEventListener("click", () => {
          row.querySelectorAll("button").forEach((x) => { x.disabled = true; });
          send(b.data);
        });
        row.append(button);
      });
      node.append(row);
      $("messages").append(node);
      scrollDown();
      return;
    }
    if (state.live) {
      state.live.text = text;
      state.live.node.firstChild.innerHTML = md.render(text);
      state.live.node.classList.remove("streaming");
      state.live = null;
    } else {
      const node = bubble("assistant", text);
      node.dataset.messageId = data.id;
      $("messages").append(node);
    }
    scrollDown();
  }

  // ---- sending, stopping, uploading ----------------------------------------------------
  async function send(text, files) {
    if (!state.chatId) await openChat(newChatId());
    try {
      const json = files && files.length ? { text, files } : { text };
      await api("/api/chats/" + state.chatId + "/messages", { method: "POST", json });
    } catch (err) {
      $("messages").append(el("p", "notice error", err.message));
    }
  }
  $("composer").addEventListener("submit", (event) => {
    event.preventDefault();
    const input = $("input");
    const text = input.value.trim();
    const files = state.pending;
    if (!text && !files.length) return;
    input.value = "";
    input.style.height = "";
    state.pending = [];
    $("attached").replaceChildren();
    if (files.length) send(text, files);  // photos and voice notes go as a message of their own
    else send(state.running && !text.startsWith("/") ? "/steer " + text : text);
  });
  $("input").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      $("composer").requestSubmit();
    }
  });
  $("input").addEventListener("input", (event) => {
    const box = event.target;
    box.style.height = "";
    box.style.height = Math.min(box.scrollHeight, 200) + "px";
  });
  $("stop").addEventListener("click", () => send("/stop"));
  $("upload").addEventListener("change", async (event) => {
    const file = event.target.files[0];
    if (!file) return;
    if (!state.chatId) await openChat(newChatId());
    try {
      const response = await fetch(base + "/api/chats/" + state.chatId + "/files/" + encodeURIComponent(file.name), {
        method: "PUT", body: file, credentials: "same-origin", headers: { "X-CSRF-Token": state.csrf },
      });
      const body = await response.json();
      if (!response.ok) throw new Error(body.error || "upload failed");
      state.pending.push(body.path);
      $("attached").append(el("span", "chip", "📎 " + file.name));
    } catch (err) {
      $("messages").append(el("p", "notice error", err.message));
    }
    event.target.value = "";
  });

  // ---- dashboard -----------------------------------------------------------------------
  function barChart(container, rows, valueOf, labelOf) {
    container.replaceChildren();
    if (!rows.length) { container.append(el("p", "muted", "Nothing recorded yet.")); return; }
    const max = Math.max(...rows.map(valueOf), 1e-9);
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    const width = Math.max(rows.length * 36, 300);
    svg.setAttribute("viewBox", "0 0 " + width + " 160");
    svg.setAttribute("role", "img");
    rows.forEach((row, i) => {
      const h = Math.max(2, (valueOf(row) / max) * 120);
      const rect = document.createElementNS(ns, "rect");
      rect.setAttribute("x", String(i * 36 + 6)); rect.setAttribute("y", String(130 - h));
      rect.setAttribute("width", "24"); rect.setAttribute("height", String(h)); rect.setAttribute("class", "bar");
      const title = document.createElementNS(ns, "title");
      title.textContent = labelOf(row) + ": " + valueOf(row);
      rect.append(title);
      const label = document.createElementNS(ns, "text");
      label.setAttribute("x", String(i * 36 + 18)); label.setAttribute("y", "148");
      label.setAttribute("class", "bar-label"); label.textContent = labelOf(row).slice(-5);
      svg.append(rect, label);
    });
    container.append(svg);
  }
  function table(node, headers, rows) {
    node.replaceChildren();
    const head = el("tr");
    headers.forEach((h) => head.append(el("th", null, h)));
    node.append(head);
    rows.forEach((cells) => { const tr = el("tr"); cells.forEach((c) => tr.append(el("td", null, String(c)))); node.append(tr); });
  }
  function ago(moment, suffix) {
    if (!moment) return suffix === undefined ? "never" : "-";
    const s = Math.max(0, Math.round(Date.now() / 1000 - moment));
    const text = s < 120 ? s + " s" : s < 7200 ? Math.floor(s / 60) + " min" : Math.floor(s / 3600) + " h";
    return text + (suffix === undefined ? " ago" : suffix);
  }
  function gatewayHealth(report) {
    const node = $("dash-gateway");
    const platforms = (report && report.platforms) || [];
    node.replaceChildren();
    if (!platforms.length) { node.append(el("caption", "muted", "No platform status (the gateway reports it while it runs).")); }
    else {
      table(node, ["platform", "state", "for", "last receive", "last send", "restarts (1 h)", "undelivered", "reason"],
        platforms.map((p) => [p.platform, p.state, ago(p.since, ""), ago(p.last_receive), ago(p.last_send),
          p.restarts_last_hour, p.undelivered, p.reason || ""]));
      node.querySelectorAll("tr").forEach((tr, i) => { if (i > 0) tr.dataset.state = platforms[i - 1].state; });
    }
    const list = $("dash-transitions");
    list.replaceChildren();
    ((report && report.transitions) || []).slice(-8).reverse().forEach((t) => {
      const when = new Date(t.at * 1000).toLocaleTimeString();
      list.append(el("li", null, when + "  " + t.platform + ": " + t.from + " → " + t.to + (t.reason ? " (" + t.reason + ")" : "")));
    });
    const owed = $("dash-undelivered");
    owed.replaceChildren();
    ((report && report.undelivered) || []).forEach((r) => {
      owed.append(el("li", null, "Undelivered to " + r.platform + ":" + r.chat_id + ", " + ago(r.created_at) + ", " +
        r.attempts + " tries" + (r.last_error ? " — " + r.last_error : "") + ": " + r.preview));
    });
  }
  async function loadDashboard() {
    const data = await api("/api/dashboard?days=" + $("dash-days").value);
    gatewayHealth(data.gateway);
    const t = data.total;
    const cards = $("dash-cards");
    cards.replaceChildren();
    [["Spend", money(t.cost_usd)], ["Model calls", t.calls], ["Tokens in", t.prompt_tokens],
     ["Tokens out", t.completion_tokens], ["Cache hits", Math.round(t.cache_hit_rate * 100) + "%"]]
      .forEach(([label, value]) => { const c = el("div", "card"); c.append(el("span", "card-value", String(value)), el("span", "card-label muted", label)); cards.append(c); });
    barChart($("dash-chart"), data.by_day.slice().reverse(), (r) => r.cost_usd || r.prompt_tokens / 1e6, (r) => r.key);
    const row = (r) => [r.key, r.calls, r.prompt_tokens, r.completion_tokens, r.cache_read_tokens, Math.round(r.cache_hit_rate * 100) + "%", money(r.cost_usd)];
    const heads = ["", "calls", "in", "out", "cache read", "hit", "cost"];
    table($("dash-models"), heads, data.by_model.map(row));
    table($("dash-sources"), heads, data.by_source.map(row));
    const platforms = Object.entries(data.sessions_by_source).map(([key, value]) => ({ key, value }));
    barChart($("dash-platforms"), platforms, (r) => r.value, (r) => r.key);
  }
  $("dash-days").addEventListener("change", loadDashboard);

  // ---- memory and skills ---------------------------------------------------------------
  function memoryError(message) { const e = $("memory-error"); e.textContent = message || ""; e.hidden = !message; }
  async function loadMemory() {
    const data = await api("/api/memory");
    document.querySelectorAll(".memory-box").forEach((box) => {
      const target = box.dataset.target;
      const list = box.querySelector(".entries");
      list.replaceChildren();
      const entries = data[target].entries;
      const used = entries.join("\n").length;
      box.querySelector(".usage").textContent = used + " / " + data[target].limit + " chars";
      entries.forEach((entry) => {
        const li = el("li", "entry");
        const text = el("span", "entry-text", entry);
        const edit = el("button", "link-button", "Edit");
        const remove = el("button", "link-button danger-text", "Remove");
        edit.addEventListener("click", async () => {
          const next = prompt("Edit entry", entry);
          if (next === null || next.trim() === entry) return;
          await memoryWrite(target, { action: "replace", old_text: entry, content: next.trim() });
        });
        remove.addEventListener("click", () => memoryWrite(target, { action: "remove", old_text: entry }));
        li.append(text, edit, remove);
        list.append(li);
      });
    });
    const skills = await api("/api/skills");
    table($("skills"), ["skill", "description", "source", "views", "uses"],
      skills.skills.map((s) => [s.name, s.description, s.source, s.views, s.uses]));
    $("skills").querySelectorAll("tr").forEach((tr, i) => {
      if (i === 0) return;
      tr.classList.add("clickable");
      tr.addEventListener("click", () => viewSkill(skills.skills[i - 1].name));
    });
  }
  async function memoryWrite(target, body) {
    memoryError("");
    try { await api("/api/memory/" + target, { method: "POST", json: body }); }
    catch (err) { memoryError(err.message); }
    loadMemory();
  }
  document.querySelectorAll(".memory-add").forEach((form) => form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const area = form.querySelector("textarea");
    const content = area.value.trim();
    if (!content) return;
    await memoryWrite(form.closest(".memory-box").dataset.target, { action: "add", content });
    area.value = "";
  }));
  async function viewSkill(name) {
    const skill = await api("/api/skills/" + encodeURIComponent(name));
    const view = $("skill-view");
    view.hidden = false;
    view.replaceChildren(el("h3", null, skill.name), el("p", "muted", skill.description));
    const body = el("div", "skill-body");
    body.innerHTML = md.render(skill.body);
    view.append(body);
  }

  // ---- scheduled jobs and the task board ------------------------------------------------
  function showError(id, message) { const e = $(id); e.textContent = message || ""; e.hidden = !message; }
  async function loadJobs() {
    showError("jobs-error", "");
    const data = await api("/api/jobs");
    $("jobs-scheduler").textContent = data.scheduler.message;
    const node = $("jobs");
    node.replaceChildren();
    const head = el("tr");
    ["job", "schedule", "next run", "last runs", ""].forEach((h) => head.append(el("th", null, h)));
    node.append(head);
    if (!data.jobs.length) { const tr = el("tr"); tr.append(el("td", "muted", "No jobs yet: herald cron add …")); node.append(tr); }
    for (const job of data.jobs) {
      const tr = el("tr");
      tr.append(el("td", null, job.name + (job.enabled ? "" : " (paused)")), el("td", null, job.schedule_text),
        el("td", null, job.next_run ? when(job.next_run) : "—"),
        el("td", null, job.runs.map((r) => r.status + (r.error ? " (" + r.error + ")" : "")).join(", ") || "none yet"));
      const actions = el("td", "actions");
      const run = el("button", "primary", "Run now");
      run.addEventListener("click", () => jobAction(job.name, "run"));
      const toggle = el("button", null, job.enabled ? "Pause" : "Resume");
      toggle.addEventListener("click", () => jobAction(job.name, job.enabled ? "pause" : "resume"));
      actions.append(run, toggle);
      tr.append(actions);
      node.append(tr);
    }
  }
  async function jobAction(name, action) {
    try { await api("/api/jobs/" + encodeURIComponent(name) + "/" + action, { method: "POST" }); }
    catch (err) { showError("jobs-error", err.message); }
    setTimeout(loadJobs, action === "run" ? 1500 : 0);
  }
  const COLUMNS = ["todo", "claimed", "in_progress", "blocked", "review", "done", "failed"];
  async function loadBoard() {
    showError("board-error", "");
    let data;
    try { data = await api("/api/board"); } catch (err) { showError("board-error", err.message); return; }
    const board = $("board");
    board.replaceChildren();
    for (const status of COLUMNS) {
      const column = el("div", "board-column");
      const tasks = data.tasks.filter((t) => t.status === status);
      column.append(el("h3", null, status.replace("_", " ") + " · " + tasks.length));
      for (const task of tasks) {
        const card = el("div", "task-card");
        card.append(el("div", "task-title", "#" + task.id + " " + task.title));
        card.append(el("div", "muted", (task.assignee || "any") + " · attempt " + task.attempts + "/" + task.max_attempts));
        if (status === "review") {
          const ok = el("button", "primary", "Approve");
          ok.addEventListener("click", async () => {
            try { await api("/api/board/" + task.id + "/approve", { method: "POST" }); } catch (err) { showError("board-error", err.message); }
            loadBoard();
          });
          card.append(ok);
        }
        column.append(card);
      }
      board.append(column);
    }
  }

  async function loadAgents() {
    const data = await api("/api/agents");
    table($("agents"), ["sub-agent", "goal", "status", "doing", "tools", "cost", "time"],
      data.agents.map((a) => ["#" + a.id, a.goal, a.status, a.activity, a.tool_calls, money(a.cost_usd), a.elapsed + " s"]));
    if (!data.agents.length) { const tr = el("tr"); tr.append(el("td", "muted", "No sub-agents in this gateway yet.")); $("agents").append(tr); }
    if (!$("tab-agents").hidden) setTimeout(loadAgents, 3000);
  }

  // ---- start ---------------------------------------------------------------------------
  (async function start() {
    const me = await api("/api/me");
    state.csrf = me.csrf;
    document.querySelectorAll("[role=tab]").forEach((tab) => { tab.hidden = !me.tabs.includes(tab.dataset.tab); });
    const fromHash = window.location.hash.slice(1);
    if (/^[A-Za-z0-9_-]{8,64}$/.test(fromHash)) await openChat(fromHash);
    else await openChat(newChatId());
  })().catch((err) => { $("messages").append(el("p", "notice error", err.message)); });
})();
