// A tag-manager-like container: it rewrites the canonical.
(function (w, d) {
  var tags = [function () {
    var link = d.querySelector('link[rel="canonical"]');
    link.setAttribute("href", "http://shop.example/wheelbarrows");
  }];
  for (var i = 0; i < tags.length; i++) tags[i]();
})(window, document);
