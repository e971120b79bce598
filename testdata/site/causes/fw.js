// A tiny framework: h() builds elements, mount() puts them in the page.
var fw = {
  h: function (tag, props, kids) {
    var el = document.createElement(tag);
    for (var k in props) el.setAttribute(k, props[k]);
    (kids || []).forEach(function (c) {
      el.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return el;
  },
  mount: function (root, tree) {
    root.replaceChildren(tree);
  }
};
