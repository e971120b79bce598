package compare

import _ "github.com/PuerkitoBio/goquery"
