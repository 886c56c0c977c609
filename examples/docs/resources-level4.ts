import { McpServer, parseUriTemplate } from "picomcp";

export const server = new McpServer({ name: "shop", version: "1.0.0" });

// {year:4}: a prefix; read gets at most 4 characters, and a longer value does not match
server.resource("archive://{year:4}/{+rest}", {
  read: ({ year, rest }) => `${year}: ${rest}`,
  //      ^? { year: string; rest: string }
});

// {?filters*}: every query key that no other variable claims, as a record; ?tag=a&tag=b gives tag: ["a", "b"]
server.resource("shop://items{?sort,filters*}", {
  read: ({ sort, filters }) => ({ sort: sort ?? "name", filters: filters ?? {} }),
  //      ^? { sort?: string; filters?: Record<string, string | string[]> }
});

// {?tags} given a list is written tags=a,b: read gets that one string, to split
server.resource("posts://all{?tags}", {
  read: ({ tags }) => (tags === undefined ? [] : tags.split(",")),
});

// a literal '?' before a path expression is part of the path, matched where it stands
server.resource("search://q?term={term}", { read: ({ term }) => `results for ${term}` });

// expand writes RFC 6570: lists, maps, prefixes; undefined variables are dropped
export const red = parseUriTemplate("shop://items{?sort,filters*}").expand({
  filters: { color: "red", size: "L" },
}); // "shop://items?color=red&size=L"
