// rgrasp_viz site: search results summarise a page's text, where MathJax does not run.
// The builder gives every math element its plain-text form (data-text, made by
// site/latex_text.py); the summary shows that instead of raw LaTeX.
// Sphinx summarises the element with role="main"; the theme puts it on <main>, which also
// holds the page's toolbar and its table of contents, so a word that is a section title was
// found in the menu first and the summary showed menu text.  The summary reads the article
// (the page's own text) instead.
(function () {
  function patch() {
    if (typeof Search === "undefined" || Search.rgraspPatched) return;
    const original = Search.htmlToText;
    Search.htmlToText = function (htmlString, anchor) {
      const doc = new DOMParser().parseFromString(htmlString, "text/html");
      doc.querySelectorAll(".math").forEach((el) => {
        el.replaceWith(doc.createTextNode(el.getAttribute("data-text") || ""));
      });
      const article = doc.querySelector("article.bd-article");
      if (article) {
        doc.querySelectorAll('[role="main"]').forEach((el) => el.removeAttribute("role"));
        article.setAttribute("role", "main");
      }
      return original.call(this, doc.documentElement.outerHTML, anchor);
    };
    Search.rgraspPatched = true;
  }
  document.addEventListener("DOMContentLoaded", patch);
})();
