// The admin page works without this file; it only asks before a save that clears the memory
// (SPEC A1: an empty body clears MEMORY.md and deletes every topic file, in one revision).
"use strict";
(function () {
  var form = document.getElementById("memory-form");
  if (!form) return;
  form.addEventListener("submit", function (event) {
    var body = form.querySelector("textarea[name=body]");
    if (!body || body.value.trim() !== "") return;
    var topics = parseInt(form.dataset.topics || "0", 10);
    var what = topics > 0
      ? "MEMORY.md and its " + topics + " topic file" + (topics === 1 ? "" : "s")
      : "MEMORY.md";
    if (!window.confirm("Save an empty memory? This clears " + what +
        " in one revision (the history keeps the old text).")) {
      event.preventDefault();
    }
  });
})();
