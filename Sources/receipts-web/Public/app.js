// receipts-web: the demo chat page. Plain JS, no build step. The gateway (receipts-web) keeps
// the chat and talks to receiptd; this page tells it what the user received, saw and did, and
// shows the receipts it pushes back.
"use strict";

const params = new URLSearchParams(location.search);
const me = params.get("user");
const $ = (id) => document.getElementById(id);
const now = () => performance.timeOrigin + performance.now();

const state = {
  users: new Map(),
  conversations: new Map(),
  messages: new Map(), // conversation -> [message]
  statuses: new Map(), // message id -> status view
  unread: new Map(), // conversation -> {unread, mentions, markedUnread}, as the user's read state says
  threads: new Map(), // thread root message id -> {unread, mentions, following}, as the user's read state says
  open: null, // the open conversation id
  openThread: null, // the root message id of the open thread pane
  lastThreadRead: new Map(), // thread root -> reply id sent as read
  // While the "Read By" sheet is open: {conversation, message, next (the cursor of the page after
  // the lines shown, null at the end), asked ({request, append} of the one page on its way),
  // stale (the lines changed while a page was on its way)}.
  sheet: null,
  socket: null,
  offline: false,
  ready: false,
  lastRead: new Map(), // conversation -> message id sent as read
  privateConversations: new Set(), // conversations whose own switch sends no read receipts
  prefersCounts: localStorage.getItem("prefersCounts") === "true",
  requests: 0,
};

const pendingKey = `receipts-web.pending-reads.${me}`;
function pendingReads() {
  try { return JSON.parse(localStorage.getItem(pendingKey) || "[]"); } catch { return []; }
}

// ---- connection ---------------------------------------------------------------------------

function connect() {
  if (state.offline || state.socket) return;
  const socket = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`);
  state.socket = socket;
  setConnection("connecting");
  socket.onopen = () => {
    socket.send(JSON.stringify({
      type: "hello",
      user: me,
      timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      locale: navigator.language,
      prefersCounts: state.prefersCounts,
    }));
  };
  socket.onmessage = (event) => receive(JSON.parse(event.data));
  socket.onclose = () => {
    // A late close of a socket already replaced (offline, then online again) changes nothing.
    if (state.socket !== socket) return;
    state.socket = null;
    state.ready = false;
    setConnection(state.offline ? "offline" : "connecting");
    if (!state.offline) setTimeout(connect, 500);
  };
}

function disconnect() {
  const socket = state.socket;
  state.socket = null;
  state.ready = false;
  if (socket) socket.close();
  setConnection("offline");
}

function setOffline(offline) {
  state.offline = offline;
  $("offline").checked = offline;
  if (offline) disconnect(); else connect();
}

function setConnection(text) {
  const label = $("connection");
  label.textContent = text;
  label.classList.toggle("offline", text !== "online");
  document.body.dataset.connection = text;
}

function send(command) {
  if (!state.ready || !state.socket) return false;
  state.socket.send(JSON.stringify(command));
  return true;
}

// ---- what the gateway pushes ------------------------------------------------------------

function receive(event) {
  switch (event.type) {
    case "init":
      state.users = new Map(event.users.map((u) => [u.id, u]));
      state.conversations = new Map(event.conversations.map((c) => [c.id, c]));
      state.messages = new Map(event.conversations.map((c) => [c.id, []]));
      for (const m of event.messages) state.messages.get(m.conversation).push(m);
      for (const s of event.statuses) state.statuses.set(s.message, s);
      $("privacy").checked = event.shareReads;
      state.privateConversations = new Set(event.privateConversations || []);
      state.ready = true;
      setConnection("online");
      if (state.sheet) { state.sheet.asked = null; requestDetail(); } // an answer lost with the old socket
      for (const m of event.messages) acknowledgeDelivery(m);
      flushPendingReads();
      renderAll();
      markVisibleRead(true);
      break;
    case "message": {
      const list = state.messages.get(event.message.conversation);
      if (!list || list.some((m) => m.id === event.message.id)) break;
      list.push(event.message);
      acknowledgeDelivery(event.message);
      if (event.message.conversation === state.open) { renderMessages(); markVisibleRead(false); }
      if (event.message.thread && event.message.thread === state.openThread) { renderThread(); markThreadRead(false); }
      renderConversations();
      break;
    }
    case "status":
      state.statuses.set(event.status.message, event.status);
      if (event.status.conversation === state.open) { renderMessages(); renderThread(); }
      if (state.sheet && state.sheet.message === event.status.message) requestDetail();
      break;
    case "unread":
      // The badges that changed, pushed to all of the user's tabs and devices.
      for (const u of event.unread) state.unread.set(u.conversation, u);
      renderConversations();
      break;
    case "threads":
      // The threads whose badge changed: a reply, a read on any device, a follow.
      for (const t of event.threads) state.threads.set(t.thread, t);
      renderMessages();
      break;
    case "privacy":
      if (event.conversation) {
        if (event.shareReads) state.privateConversations.delete(event.conversation);
        else state.privateConversations.add(event.conversation);
        if (event.conversation === state.open) $("conversation-privacy").checked = event.shareReads;
      } else {
        $("privacy").checked = event.shareReads;
      }
      break;
    case "users":
      state.users = new Map(event.users.map((u) => [u.id, u]));
      renderAll();
      if (state.sheet) requestDetail();
      break;
    case "readDetail":
      detailArrived(event.detail, event.request);
      break;
    case "error":
      console.warn("receipts-web:", event.error);
      document.body.dataset.lastError = event.error;
      break;
  }
}

// A message from someone else reached this browser: "delivered", even if its chat is closed.
function acknowledgeDelivery(message) {
  if (message.sender === me || message.isSystem) return;
  send({ type: "delivered", conversation: message.conversation, message: message.id });
}

// The open conversation is on screen: mark read up to its newest message from someone else.
// Offline, the read waits in localStorage with the time it happened here.
function markVisibleRead(force) {
  const conversation = state.open;
  if (!conversation || document.visibilityState !== "visible") return;
  // Thread replies are read in their thread's pane, not here.
  const others = (state.messages.get(conversation) || []).filter((m) => m.sender !== me && !m.isSystem && !m.thread);
  const latest = others[others.length - 1];
  if (!latest) return;
  if (!force && state.lastRead.get(conversation) === latest.id) return;
  state.lastRead.set(conversation, latest.id);
  const read = { type: "read", conversation, message: latest.id };
  if (!send(read)) {
    const queue = pendingReads().filter((r) => r.conversation !== conversation);
    queue.push({ ...read, clientTime: Date.now() });
    localStorage.setItem(pendingKey, JSON.stringify(queue));
    document.body.dataset.pendingReads = String(queue.length);
  }
}

// The open thread pane is on screen: mark the thread read up to its newest reply from someone else.
function markThreadRead(force) {
  const root = state.openThread;
  if (!root || !state.open || document.visibilityState !== "visible") return;
  const others = (state.messages.get(state.open) || []).filter((m) => m.thread === root && m.sender !== me && !m.isSystem);
  const latest = others[others.length - 1];
  if (!latest) return;
  if (!force && state.lastThreadRead.get(root) === latest.id) return;
  state.lastThreadRead.set(root, latest.id);
  send({ type: "read", conversation: state.open, message: latest.id, thread: root });
}

function flushPendingReads() {
  const queue = pendingReads();
  for (const read of queue) send(read);
  localStorage.removeItem(pendingKey);
  document.body.dataset.pendingReads = "0";
}

// The "Read By" sheet asks one page at a time (of the gateway's page size), so that a page's
// cursor is always the end of the lines shown. requestDetail() asks again for as many lines as
// are shown (they changed; a message's recipients do not); showMoreDetail() asks for the page
// after them.
function requestDetail() {
  const sheet = state.sheet;
  if (!sheet) return;
  if (sheet.asked) { sheet.stale = true; return; }
  const shown = document.querySelectorAll("#sheet [data-testid=read-by-row]").length;
  askDetail(shown > 0 ? { size: shown } : {}, false);
}

function showMoreDetail() {
  const sheet = state.sheet;
  if (!sheet || sheet.asked || !sheet.next) return;
  askDetail({ after: sheet.next }, true);
}

function askDetail(page, append) {
  const sheet = state.sheet;
  state.requests += 1;
  const command = { type: "readDetail", conversation: sheet.conversation, message: sheet.message, request: state.requests, ...page };
  if (send(command)) sheet.asked = { request: state.requests, append };
}

function detailArrived(detail, request) {
  const sheet = state.sheet;
  if (!sheet || sheet.message !== detail.message || !sheet.asked || sheet.asked.request !== request) return;
  const append = sheet.asked.append;
  sheet.asked = null;
  sheet.next = detail.next || null;
  renderSheet(detail, append);
  if (sheet.stale) { sheet.stale = false; requestDetail(); }
}

// ---- rendering ----------------------------------------------------------------------------

function userName(id) {
  const user = state.users.get(id);
  if (!user) return id;
  return user.deleted ? "Deleted User" : user.name;
}

function conversationTitle(conversation) {
  if (conversation.isGroup) return conversation.title;
  const other = conversation.members.find((m) => m !== me);
  return userName(other);
}

function renderAll() {
  $("me").textContent = userName(me);
  renderConversations();
  renderMessages();
}

function renderConversations() {
  const list = $("conversations");
  list.replaceChildren();
  for (const conversation of state.conversations.values()) {
    const item = document.createElement("li");
    item.dataset.testid = `conversation-${conversation.id}`;
    item.dataset.conversation = conversation.id;
    item.classList.toggle("open", conversation.id === state.open);
    const title = document.createElement("span");
    title.textContent = conversationTitle(conversation);
    const badge = document.createElement("span");
    badge.className = "badge";
    badge.dataset.testid = `unread-${conversation.id}`;
    const mention = document.createElement("span");
    mention.className = "badge mention";
    mention.dataset.testid = `mentions-${conversation.id}`;
    const unread = state.unread.get(conversation.id);
    if (unread && conversation.id !== state.open) {
      badge.textContent = unread.unread > 0 ? String(unread.unread) : unread.markedUnread ? "●" : "";
      mention.textContent = unread.mentions > 0 ? `@${unread.mentions}` : "";
    }
    item.append(title, mention, badge);
    item.addEventListener("click", () => openConversation(conversation.id));
    list.append(item);
  }
}

function openConversation(id) {
  document.body.dataset.openedAt = String(now());
  state.open = id;
  state.openThread = null;
  $("conversation-privacy").checked = !state.privateConversations.has(id);
  closeSheet();
  renderAll();
  markVisibleRead(true);
}

function closeConversation() {
  state.open = null;
  state.openThread = null;
  closeSheet();
  renderAll();
}

// ✓ sent, ✓✓ delivered (gray), ✓✓ read (blue).
function ticksFor(status) {
  if (!status) return { text: "✓", state: "sent" };
  switch (status.status) {
    case "delivered": return { text: "✓✓", state: "delivered" };
    case "read": case "readBySome": case "readByAll": return { text: "✓✓", state: "read" };
    default: return { text: "✓", state: "sent" };
  }
}

function receiptText(status) {
  if (!status || !status.text) return "";
  if (state.prefersCounts && status.status === "readBySome") return `✓✓ ${status.text}`;
  return status.text;
}

function renderMessages() {
  const chat = $("chat");
  const conversation = state.open && state.conversations.get(state.open);
  chat.hidden = !conversation;
  $("no-chat").hidden = !!conversation;
  if (!conversation) return;
  $("chat-title").textContent = conversationTitle(conversation);
  const all = state.messages.get(conversation.id) || [];
  const messages = all.filter((m) => !m.thread);
  const own = messages.filter((m) => m.sender === me && !m.isSystem);
  const lastOwn = own[own.length - 1];
  const list = $("messages");
  const previousReceipt = list.querySelector("[data-testid=receipt]");
  const previous = previousReceipt ? { message: previousReceipt.dataset.message, text: previousReceipt.textContent, at: previousReceipt.dataset.changedAt } : null;
  list.replaceChildren();
  for (const message of messages) {
    const item = document.createElement("li");
    const kind = message.isSystem ? "system" : message.sender === me ? "own" : "other";
    item.className = `msg ${kind}${conversation.isGroup ? " group" : ""}`;
    item.dataset.testid = message.isSystem ? "system-message" : "message";
    item.dataset.message = message.id;
    item.dataset.sender = message.sender;
    if (kind === "other" && conversation.isGroup) {
      const sender = document.createElement("span");
      sender.className = "sender";
      sender.textContent = userName(message.sender);
      item.append(sender);
    }
    const bubble = document.createElement("div");
    bubble.className = "bubble";
    bubble.dataset.testid = "bubble";
    bubble.textContent = message.text;
    bubble.addEventListener("click", () => maybeOpenSheet(conversation, message));
    bubble.addEventListener("contextmenu", (event) => { event.preventDefault(); maybeOpenSheet(conversation, message); });
    item.append(bubble);
    if (kind === "own") {
      const status = state.statuses.get(message.id);
      const ticks = ticksFor(status);
      const span = document.createElement("span");
      span.className = `ticks ${ticks.state}`;
      span.dataset.testid = "ticks";
      span.dataset.state = ticks.state;
      span.textContent = ticks.text;
      item.append(span);
      if (message === lastOwn) {
        const receipt = document.createElement("div");
        receipt.className = "receipt";
        receipt.dataset.testid = "receipt";
        receipt.dataset.message = message.id;
        receipt.textContent = receiptText(status);
        if (status && status.readAt) receipt.dataset.readAt = String(status.readAt);
        const unchanged = previous && previous.message === message.id && previous.text === receipt.textContent;
        receipt.dataset.changedAt = unchanged ? previous.at : String(now());
        item.append(receipt);
      }
    }
    if (!message.isSystem) item.append(threadRow(message, all.filter((m) => m.thread === message.id).length));
    list.append(item);
  }
  list.scrollTop = list.scrollHeight;
  renderThread();
}

// Under a message: its thread's replies (or "Reply") and the user's badge in it: unread replies,
// and "@n" for those that mention them.
function threadRow(message, replies) {
  const row = document.createElement("div");
  row.className = "thread-row";
  const open = document.createElement("button");
  open.type = "button";
  open.dataset.testid = `thread-open-${message.id}`;
  open.textContent = replies === 0 ? "Reply" : replies === 1 ? "1 reply" : `${replies} replies`;
  open.addEventListener("click", () => openThread(message.id));
  const badge = document.createElement("span");
  badge.className = "badge";
  badge.dataset.testid = `thread-badge-${message.id}`;
  const thread = state.threads.get(message.id);
  if (thread && thread.unread > 0 && state.openThread !== message.id) {
    badge.textContent = thread.mentions > 0 ? `${thread.unread} @${thread.mentions}` : String(thread.unread);
  }
  row.append(open, badge);
  return row;
}

function openThread(root) {
  state.openThread = root;
  renderThread();
  renderMessages();
  markThreadRead(true);
}

function closeThread() {
  state.openThread = null;
  renderThread();
  renderMessages();
}

// The thread pane: the root, then its replies; one's own replies show their receipts and open
// their "Read By" sheet.
function renderThread() {
  const pane = $("thread");
  const conversation = state.open && state.conversations.get(state.open);
  const root = state.openThread && (state.messages.get(state.open) || []).find((m) => m.id === state.openThread);
  pane.hidden = !conversation || !root;
  if (pane.hidden) return;
  const list = $("thread-messages");
  list.replaceChildren();
  const replies = (state.messages.get(state.open) || []).filter((m) => m.thread === root.id);
  for (const message of [root, ...replies]) {
    const item = document.createElement("li");
    const kind = message.sender === me ? "own" : "other";
    item.className = `msg ${kind}`;
    item.dataset.testid = message === root ? "thread-root" : "thread-reply";
    item.dataset.message = message.id;
    const bubble = document.createElement("div");
    bubble.className = "bubble";
    bubble.textContent = message.text;
    bubble.addEventListener("click", () => maybeOpenSheet(conversation, message));
    item.append(bubble);
    if (kind === "own" && message !== root) {
      const status = state.statuses.get(message.id);
      const ticks = ticksFor(status);
      const span = document.createElement("span");
      span.className = `ticks ${ticks.state}`;
      span.dataset.testid = "thread-ticks";
      span.dataset.state = ticks.state;
      span.textContent = ticks.text;
      item.append(span);
    }
    list.append(item);
  }
}

// The "Read By" sheet: one's own, non-system messages in groups only.
function maybeOpenSheet(conversation, message) {
  if (!conversation.isGroup || message.isSystem || message.sender !== me) return;
  state.sheet = { conversation: conversation.id, message: message.id, next: null, asked: null, stale: false };
  $("read-list").replaceChildren();
  $("delivered-list").replaceChildren();
  $("not-delivered-list").replaceChildren();
  $("read-by-more").hidden = true;
  $("sheet-backdrop").hidden = false;
  $("sheet-backdrop").dataset.message = message.id;
  requestDetail();
}

function closeSheet() {
  state.sheet = null;
  $("sheet-backdrop").hidden = true;
}

const relativeFormat = new Intl.RelativeTimeFormat(navigator.language, { numeric: "auto" });

// "now", "5 minutes ago", "1 hour ago", "yesterday", "2 days ago".
function formatRelative(time, reference = Date.now()) {
  const seconds = Math.round((time - reference) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 45) return relativeFormat.format(0, "second");
  if (abs < 45 * 60) return relativeFormat.format(Math.round(seconds / 60), "minute");
  if (abs < 22 * 3600) return relativeFormat.format(Math.round(seconds / 3600), "hour");
  return relativeFormat.format(Math.round(seconds / 86400), "day");
}

// Shows a page of the sheet: in place of the lines shown, or after them ("Show more").
function renderSheet(detail, append) {
  const fill = (listId, rows, timeOf) => {
    const list = $(listId);
    if (!append) list.replaceChildren();
    for (const row of rows) {
      const item = document.createElement("li");
      item.dataset.testid = "read-by-row";
      item.dataset.user = row.user;
      const name = document.createElement("span");
      name.dataset.testid = "row-name";
      name.textContent = row.deleted ? "Deleted User" : row.name;
      const time = document.createElement("span");
      time.className = "time";
      time.dataset.testid = "row-time";
      const at = timeOf(row);
      if (at) { time.dataset.time = String(at); time.textContent = formatRelative(at); }
      item.append(name, time);
      list.append(item);
    }
    // "Nobody" only once the whole sheet is shown: a later page may still fill the list.
    if (!state.sheet.next && list.children.length === 0) {
      const empty = document.createElement("li");
      empty.className = "empty";
      empty.textContent = "Nobody";
      list.append(empty);
    }
  };
  fill("read-list", detail.read, (row) => row.readAt);
  fill("delivered-list", detail.delivered, () => null);
  fill("not-delivered-list", detail.notDelivered, () => null);
  $("not-delivered-section").hidden = !$("not-delivered-list").querySelector("[data-testid=read-by-row]");
  $("read-by-more").hidden = !state.sheet.next;
  $("sheet-backdrop").dataset.version = String((Number($("sheet-backdrop").dataset.version) || 0) + 1);
}

// Relative times age while the sheet stays open.
setInterval(() => {
  for (const time of document.querySelectorAll("#sheet [data-time]")) {
    time.textContent = formatRelative(Number(time.dataset.time));
  }
}, 10000);

// ---- start --------------------------------------------------------------------------------

function start() {
  if (!me) { $("login").hidden = false; return; }
  $("app").hidden = false;
  $("counts").checked = state.prefersCounts;
  $("close-chat").addEventListener("click", closeConversation);
  $("close-thread").addEventListener("click", closeThread);
  $("thread-composer").addEventListener("submit", (event) => {
    event.preventDefault();
    const input = $("thread-composer-input");
    const text = input.value.trim();
    if (!text || !state.open || !state.openThread) return;
    if (send({ type: "send", conversation: state.open, text, thread: state.openThread })) input.value = "";
  });
  $("close-sheet").addEventListener("click", closeSheet);
  $("read-by-more").addEventListener("click", showMoreDetail);
  $("sheet-backdrop").addEventListener("click", (event) => { if (event.target === $("sheet-backdrop")) closeSheet(); });
  $("mark-unread").addEventListener("click", () => {
    const conversation = state.open;
    if (!conversation) return;
    send({ type: "markUnread", conversation });
    closeConversation();
  });
  $("composer").addEventListener("submit", (event) => {
    event.preventDefault();
    const input = $("composer-input");
    const text = input.value.trim();
    if (!text || !state.open) return;
    if (send({ type: "send", conversation: state.open, text })) input.value = "";
  });
  $("privacy").addEventListener("change", (event) => send({ type: "privacy", shareReads: event.target.checked }));
  $("conversation-privacy").addEventListener("change", (event) => {
    if (state.open) send({ type: "privacy", conversation: state.open, shareReads: event.target.checked });
  });
  $("counts").addEventListener("change", (event) => {
    state.prefersCounts = event.target.checked;
    localStorage.setItem("prefersCounts", String(state.prefersCounts));
    if (state.socket) state.socket.close(); // the next hello carries the new style
  });
  $("offline").addEventListener("change", (event) => setOffline(event.target.checked));
  $("delete-account").addEventListener("click", () => send({ type: "deleteAccount" }));
  window.addEventListener("offline", () => setOffline(true));
  window.addEventListener("online", () => setOffline(false));
  document.addEventListener("visibilitychange", () => { markVisibleRead(false); markThreadRead(false); });
  connect();
}

window.receiptsWeb = { state, formatRelative };
start();
