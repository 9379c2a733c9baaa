// Optional enhancements; every page works without them.
// Charts arrive as <img>; inlining their SVG lets its per-point titles show values on hover.
document.querySelectorAll("img.chart").forEach(async (img) => {
  try {
    const res = await fetch(img.src);
    if (!res.ok || !(res.headers.get("content-type") || "").startsWith("image/svg+xml")) return;
    const doc = new DOMParser().parseFromString(await res.text(), "image/svg+xml");
    const svg = doc.documentElement;
    if (svg.nodeName !== "svg") return;
    svg.setAttribute("aria-label", img.alt);
    img.replaceWith(document.importNode(svg, true));
  } catch (_) {
    // The image stays as it is.
  }
});
// The version picker redraws as soon as a box is ticked.
document.querySelectorAll("form.picker input[type=checkbox]").forEach((box) => {
  box.addEventListener("change", () => box.form.requestSubmit());
});
