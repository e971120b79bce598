// The shop's app: fetches the product list and renders it with fw.js.
fetch("/causes/products.json")
  .then(function (r) { return r.json(); })
  .then(function (list) {
    var h = fw.h;
    fw.mount(document.getElementById("app"), h("ul", {}, list.map(function (p) {
      return h("li", {}, [h("a", {href: "/p/" + p.id}, [p.name]), " " + p.text]);
    })));
  });
