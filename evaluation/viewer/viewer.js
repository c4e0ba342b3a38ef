// The episode viewer's one script: the index's filters, a turn's full request when it is opened, and the
// token chains drawn when they are opened. It never builds markup from a trace: every text goes to textContent.
"use strict";
(() => {
  const embedded = {};
  const data = (id) => {
    if (!(id in embedded)) embedded[id] = JSON.parse(document.getElementById(id).textContent);
    return embedded[id];
  };
  const element = (tag, className, text) => {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  };

  const form = document.getElementById("filters");
  if (form) {
    const rows = Array.from(document.querySelectorAll("table.episodes tbody tr"));
    const apply = () => {
      const wanted = new FormData(form);
      const status = wanted.get("status"), task = wanted.get("task");
      const min = parseFloat(wanted.get("min")), max = parseFloat(wanted.get("max"));
      let shown = 0;
      rows.forEach((row) => {
        const reward = parseFloat(row.dataset.reward);
        const keep = (!status || row.dataset.status === status) && (!task || row.dataset.task === task)
          && (Number.isNaN(min) || reward >= min) && (Number.isNaN(max) || reward <= max);
        row.hidden = !keep;
        shown += keep ? 1 : 0;
      });
      document.getElementById("shown").textContent = `${shown} of ${rows.length} episodes shown`;
    };
    const fromAddress = () => {  // index.html#task=...&status=...&min=...&max=...
      const params = new URLSearchParams(location.hash.slice(1));
      for (const field of form.elements) if (field.name) field.value = params.get(field.name) ?? "";
      apply();
    };
    form.addEventListener("input", apply);
    form.addEventListener("change", apply);
    form.addEventListener("submit", (event) => event.preventDefault());
    window.addEventListener("hashchange", fromAddress);
    fromAddress();
  }

  document.querySelectorAll("details.full").forEach((details) => details.addEventListener("toggle", () => {
    const pre = details.querySelector("pre");
    if (!details.open || pre.textContent) return;
    const all = data("polar-requests");
    const request = all.requests[Number(details.dataset.position)];
    const full = {api: request.api, model: request.model, params: request.params,
      messages: request.m.map((i) => all.messages[i]), tools: all.tools[request.t]};
    if (request.prompt_token_ids) full.prompt_token_ids = request.prompt_token_ids;
    pre.textContent = JSON.stringify(full, null, 2);
  }));

  document.querySelectorAll("details.chain").forEach((details) => details.addEventListener("toggle", () => {
    const box = details.querySelector(".tokens");
    if (!details.open || box.childElementCount) return;
    const tokens = data("polar-tokens");
    const chain = tokens.chains[Number(details.dataset.chain)];
    const text = tokens.vocab ? (id) => tokens.vocab[id] ?? `[${id}]` : (id) => `[${id}]`;
    const prompt = element("details", "prompt");
    prompt.append(element("summary", "", `prompt: ${chain.prompt.length} tokens`),
      element("pre", "prompt", chain.prompt.map(text).join("")));
    const response = element("pre", "response");
    const spans = document.createDocumentFragment();
    const n = chain.response.length;
    for (let i = 0; i < n;) {
      if (chain.mask[i] === "0") {  // one span for each run of tokens the environment added
        let j = i;
        while (j < n && chain.mask[j] === "0") j++;
        const span = element("span", "env", chain.response.slice(i, j).map(text).join(""));
        span.title = `${j - i} token(s) added by the environment (mask 0)`;
        spans.append(span);
        i = j;
      } else {
        const logprob = chain.logprobs[i], p = Math.exp(logprob);
        const span = element("span", "s", text(chain.response[i]));
        span.title = `token ${chain.response[i]} · logprob ${logprob.toFixed(4)} · p ${p.toFixed(3)}`;
        span.style.setProperty("--p", p.toFixed(3));
        spans.append(span);
        i += 1;
      }
    }
    response.append(spans);
    box.append(prompt, response);
  }));
})();
