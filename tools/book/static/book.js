// MathJax 2 from jupyter-server-mathjax ships the STIX web fonts only: the fast preview (TeX
// fonts) is off, and a formula MathJax cannot read shows as an error. <body data-mathjax="done">
// once the page is typeset. Sphinx writes MathJax 3's configuration; this one replaces it.
// (tests/test_site.py waits for it).
window.MathJax = {
  "HTML-CSS": {availableFonts: [], preferredFont: null, webFont: "STIX-Web", imageFont: null},
  "fast-preview": {disabled: true},
  messageStyle: "none",
  // MyST-NB marks a notebook's page for MathJax to skip, all but its formulas (class "math")
  // and outputs: as MathJax 3's processHtmlClass, which MyST-NB sets, says it.
  tex2jax: {processClass: "tex2jax_process|mathjax_process|math|output_area"},
  TeX: {noErrors: {disabled: true}, noUndefined: {disabled: true}},
  AuthorInit: function () {
    MathJax.Hub.Register.StartupHook("End", function () {
      MathJax.Hub.Queue(function () { document.body.setAttribute("data-mathjax", "done"); });
    });
  },
};
