// A run still being written: every 5 s, read this page again and, when more episodes are stored,
// put the new counts and grid in place (the page works the same without this script: reload).
(() => {
  const meta = document.getElementById("episodes");
  if (!meta || !meta.dataset.live) return;
  const swap = (fresh, id) => {
    const now = document.getElementById(id), next = fresh.getElementById(id);
    if (now && next) now.replaceWith(next);
  };
  const poll = async () => {
    try {
      const reply = await fetch(location.href, {cache: "no-store"});
      if (reply.ok) {
        const fresh = new DOMParser().parseFromString(await reply.text(), "text/html");
        const next = fresh.getElementById("episodes");
        if (next && next.textContent !== document.getElementById("episodes").textContent) {
          swap(fresh, "episodes");
          swap(fresh, "grid-table");
        }
        if (next && !next.dataset.live) return;  // the run is complete: stop watching
      }
    } catch (error) { /* the viewer was stopped: try again later */ }
    setTimeout(poll, 5000);
  };
  setTimeout(poll, 5000);
})();
