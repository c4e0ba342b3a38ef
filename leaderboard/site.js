// Sortable columns (click or Enter on a header) and a text filter for the leaderboard's tables.
// No dependencies and no network: the site is static files.
"use strict";
document.querySelectorAll("table.sortable").forEach((table) => {
  const headers = Array.from(table.tHead.rows[0].cells);
  headers.forEach((th, column) => {
    th.tabIndex = 0;
    const sort = () => {
      const ascending = th.getAttribute("aria-sort") !== "ascending";
      headers.forEach((other) => other.removeAttribute("aria-sort"));
      th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      const numeric = th.dataset.type === "num";
      const value = (row) => {
        const cell = row.cells[column];
        const text = cell.dataset.value ?? cell.textContent.trim();
        if (!numeric) return text.toLowerCase();
        const number = parseFloat(text);
        return Number.isNaN(number) ? -Infinity : number;
      };
      const body = table.tBodies[0];
      const rows = Array.from(body.rows);
      rows.sort((a, b) => {
        const x = value(a), y = value(b);
        const order = numeric ? (x > y) - (x < y) : x.localeCompare(y);
        return ascending ? order : -order;
      });
      rows.forEach((row) => body.appendChild(row));
    };
    th.addEventListener("click", sort);
    th.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        sort();
      }
    });
  });
});

const filter = document.getElementById("filter");
if (filter) {
  filter.addEventListener("input", () => {
    const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    let shown = 0, total = 0;
    document.querySelectorAll("table.filterable tbody tr").forEach((row) => {
      const text = row.textContent.toLowerCase();
      row.hidden = !words.every((word) => text.includes(word));
      total += 1;
      shown += row.hidden ? 0 : 1;
    });
    document.getElementById("shown").textContent = words.length ? `${shown} of ${total} rows shown` : "";
  });
}
