// rgrasp_viz site: search results summarise a page's text, where MathJax does not run.
// The builder gives every math element its plain-text form (data-text, made by
// site/latex_text.py); the summary shows that instead of raw LaTeX.
(function () {
  function patch() {
    if (typeof Search === "undefined" || Search.rgraspPatched) return;
    const original = Search.htmlToText;
    Search.htmlToText = function (htmlString, anchor) {
      const doc = new DOMParser().parseFromString(htmlString, "text/html");
      doc.querySelectorAll(".math").forEach((el) => {
        el.replaceWith(doc.createTextNode(el.getAttribute("data-text") || ""));
      });
      return original.call(this, doc.documentElement.outerHTML, anchor);
    };
    Search.rgraspPatched = true;
  }
  document.addEventListener("DOMContentLoaded", patch);
})();
