// Tiny renderer for the test SPA: lekta.render(el, [[tag, text, href?], ...]).
var lekta = {
  render: function (root, nodes) {
    nodes.forEach(function (n) {
      var el = document.createElement(n[0]);
      el.textContent = n[1];
      if (n[2]) {
        el.setAttribute("href", n[2]);
      }
      root.appendChild(el);
      if (n[0] === "a") {
        root.appendChild(document.createTextNode(" "));
      }
    });
  }
};
