// One widget per prompt kind (choose_one, choose_subset, assign, order): every decision of every
// game can be answered by clicking, whatever board draws the view. `nameOf(value)` turns an
// option, candidate, source or item into words (boards know their ids; prompts carry labels).

import { h } from "./dom.js";

export function promptWidget(decision, act, nameOf = String) {
  const kind = decision.kind;
  if (kind === "choose_one") return chooseOne(decision, act);
  if (kind === "choose_subset") return chooseSubset(decision, act, nameOf);
  if (kind === "assign") return assign(decision, act, nameOf);
  if (kind === "order") return order(decision, act, nameOf);
  return h("p.muted", {}, `This client cannot answer a ${kind} prompt.`);
}

function labelAt(decision, list, i, nameOf) {
  return decision.labels && decision.labels[i] !== undefined ? decision.labels[i] : nameOf(list[i]);
}

function chooseOne(decision, act) {
  return h(
    "div.choices",
    {},
    decision.options.map((option, i) =>
      h(
        "button.choice",
        { type: "button", dataset: { option: i }, onclick: () => act(option) },
        labelAt(decision, decision.options, i, String),
      ),
    ),
  );
}

function chooseSubset(decision, act, nameOf) {
  const chosen = new Set();
  const confirm = h("button.primary", { type: "button", dataset: { confirm: "" } });
  const refresh = () => {
    const n = chosen.size;
    confirm.disabled = n < decision.min || n > decision.max;
    confirm.textContent = n === 0 ? "confirm: none" : `confirm ${n}`;
  };
  confirm.addEventListener("click", () => act(decision.candidates.filter((_, i) => chosen.has(i))));
  const boxes = decision.candidates.map((_, i) => {
    const box = h("input", { type: "checkbox", dataset: { candidate: i } });
    box.addEventListener("change", () => {
      if (box.checked) chosen.add(i);
      else chosen.delete(i);
      refresh();
    });
    return h("label.check", {}, box, " ", labelAt(decision, decision.candidates, i, nameOf));
  });
  refresh();
  const range = decision.min === decision.max ? `${decision.min}` : `${decision.min} to ${decision.max}`;
  return h("div.subset", {}, h("p.muted", {}, `choose ${range}`), boxes, confirm);
}

function assign(decision, act, nameOf) {
  const selects = decision.sources.map((source, i) => {
    const select = h(
      "select",
      { dataset: { source: i } },
      h("option", { value: "" }, decision.required ? "choose" : "none"),
      decision.targets[i].map((target, j) => h("option", { value: j }, nameOf(target))),
    );
    return { source, select, row: h("label.assign", {}, h("span", {}, nameOf(source)), " → ", select) };
  });
  const confirm = h("button.primary", { type: "button", dataset: { confirm: "" } }, "confirm");
  confirm.addEventListener("click", () => {
    const pairs = [];
    selects.forEach(({ source, select }, i) => {
      if (select.value !== "") pairs.push([source, decision.targets[i][Number(select.value)]]);
    });
    act(pairs);
  });
  return h("div.assign", {}, selects.map((s) => s.row), confirm);
}

function order(decision, act, nameOf) {
  const items = [...decision.items];
  const list = h("ol.order");
  const draw = () => {
    list.replaceChildren(
      ...items.map((item, i) =>
        h(
          "li",
          {},
          h("span", {}, nameOf(item)),
          " ",
          h("button", { type: "button", disabled: i === 0, onclick: () => move(i, -1), "aria-label": "earlier" }, "↑"),
          h(
            "button",
            { type: "button", disabled: i === items.length - 1, onclick: () => move(i, 1), "aria-label": "later" },
            "↓",
          ),
        ),
      ),
    );
  };
  const move = (i, step) => {
    [items[i], items[i + step]] = [items[i + step], items[i]];
    draw();
  };
  draw();
  const confirm = h("button.primary", { type: "button", dataset: { confirm: "" }, onclick: () => act([...items]) }, "confirm");
  return h("div.order", {}, list, confirm);
}
