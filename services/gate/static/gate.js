// Keyboard-first review: a approve, r reject (reason, Enter), n next, j/k move.
(function () {
  "use strict";
  const page = document.body.dataset.page;
  const typing = (el) => el && (el.tagName === "TEXTAREA" || el.tagName === "INPUT" || el.tagName === "SELECT");

  function move(list, current, delta) {
    if (!list.length) return -1;
    const next = Math.min(Math.max(current + delta, 0), list.length - 1);
    return next;
  }

  if (page === "queue") {
    const rows = Array.from(document.querySelectorAll("#queue tr.row"));
    let at = rows.findIndex((r) => r.classList.contains("selected"));
    const select = (i) => {
      rows.forEach((r) => r.classList.remove("selected"));
      if (i >= 0) { rows[i].classList.add("selected"); rows[i].scrollIntoView({block: "nearest"}); }
      at = i;
    };
    document.addEventListener("keydown", (e) => {
      if (typing(e.target) || e.ctrlKey || e.metaKey || e.altKey) return;
      if (e.key === "j") select(move(rows, at, 1));
      else if (e.key === "k") select(move(rows, at, -1));
      else if ((e.key === "Enter" || e.key === "o") && at >= 0) window.location = rows[at].dataset.href;
      else if (e.key === "n" && rows.length) window.location = rows[0].dataset.href;
      else return;
      e.preventDefault();
    });
    rows.forEach((r, i) => r.addEventListener("click", () => select(i)));
  }

  if (page === "item") {
    const form = document.getElementById("decide");
    const reason = document.getElementById("reason");
    const next = document.getElementById("next");
    const steps = Array.from(document.querySelectorAll("section.step"));
    let at = -1;
    const reject = () => form.requestSubmit(document.getElementById("reject"));
    document.addEventListener("keydown", (e) => {
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      if (e.target === reason) {
        if (e.key === "Escape") { reason.blur(); e.preventDefault(); }
        else if (e.key === "Enter" && !e.shiftKey) {
          e.preventDefault();
          if (reason.value.trim()) reject(); else reason.classList.add("needed");
        }
        return;
      }
      if (typing(e.target)) return;
      if (e.key === "a" && form) form.requestSubmit(document.getElementById("approve"));
      else if (e.key === "r" && form) {
        if (reason.value.trim()) reject(); else { reason.classList.add("needed"); reason.focus(); }
      }
      else if (e.key === "n" && next) window.location = next.getAttribute("href");
      else if ((e.key === "j" || e.key === "k") && steps.length) {
        at = move(steps, at, e.key === "j" ? 1 : -1);
        steps.forEach((s) => s.classList.remove("current"));
        steps[at].classList.add("current");
        steps[at].scrollIntoView({block: "start"});
      }
      else return;
      e.preventDefault();
    });
  }
})();
