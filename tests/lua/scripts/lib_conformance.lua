-- scenario: {"agents": 1, "max_steps": 1}
-- The bounded string and table functions (lua_lib.c) give what Lua's own give: these
-- expectations are the output of Lua 5.4's own library on the same calls.
local out = {}
local function show(...)
  local t = table.pack(...)
  for i = 1, t.n do t[i] = type(t[i]) == "string" and string.format("%q", t[i]) or tostring(t[i]) end
  return table.concat(t, ",")
end
local function try(f, ...)
  local r = table.pack(pcall(f, ...))
  if not r[1] then return "error " .. tostring(r[2]):gsub("^[^:]*:%d+: ", "") end
  return show(table.unpack(r, 2, r.n))
end
local F = {
  {"find", "hello world", "o w"}, {"find", "hello world", "l+"}, {"find", "hello", "l", 4},
  {"find", "hello", "xyz"}, {"find", "hello", "", 10}, {"find", "hello", "", 6}, {"find", "a.b", ".", 1, true},
  {"find", "abc", "b", -1}, {"find", "abc", "b", -10}, {"find", "  key = val", "(%w+)%s*=%s*(%w+)"},
  {"match", "key = val", "^(%w+)%s*=%s*(%w+)$"}, {"match", "2024-05-06", "(%d+)-(%d+)-(%d+)"},
  {"match", "hello", "()ll()"}, {"match", "f(a(b)c)d", "%b()"}, {"match", "THE (quick) fox", "%f[%a]%a+"},
  {"match", "abcabc", "(abc)%1"}, {"match", "aaa", "a-b"}, {"match", "aaab", "a-b"}, {"match", "aaa", "^a-$"},
  {"match", "x]y", "[]]"}, {"match", "x^y", "[%^]"}, {"match", "abc-def", "[a-c%-]+"}, {"match", "ABCdef", "[^%l]+"},
  {"match", "a+b", "a%+b"}, {"match", "hello", ".-(l+)(.*)"}, {"match", "hello", "h?e?x?llo"},
  {"match", "", ".*"}, {"match", "abc", "$"}, {"match", "a$b", "a$b"}, {"match", "\0x\0", "%z?x"},
  {"match", "a\0b", "[%z]"}, {"match", "tab\there", "%s"}, {"match", "3.14e5", "^[+-]?%d+%.?%d*[eE]?%d*$"},
  {"match", "abc", "(a)(b)(c)"}, {"match", "abc", "((a)(b))"}, {"match", "hello", "%"}, {"match", "hello", "[a"},
  {"match", "hello", "(h"}, {"match", "hello", "h)"}, {"match", "hello", "%1"}, {"match", "hello", "%f"},
  {"match", "hello", "%bx"}, {"match", "hello", "[%a"}, {"match", "(x)", "%b()"},
  {"match", "hello", "()"}, {"match", "x", "(()x)"}, {"match", "abab", "(ab)%1$"}, {"match", "AbC", "%u%l%u"},
  {"match", "x1_", "%W"}, {"match", "héllo", "[\128-\255]+"},
}
for i, c in ipairs(F) do
  out[#out + 1] = i .. " " .. c[1] .. " " .. try(string[c[1]], table.unpack(c, 2))
end
local G = {
  {"hello world from Lua", "%a+"}, {"k=v, a=b", "(%w+)=(%w+)"}, {"abc", ""}, {"abc", "()"},
  {"aXbXc", "[^X]*"}, {"one two", "%a+", 4}, {"one two", "%a+", -3}, {"^x^", "^x"},
}
for i, c in ipairs(G) do
  local acc = {}
  for a, b in string.gmatch(c[1], c[2], c[3]) do acc[#acc + 1] = show(a, b) end
  out[#out + 1] = "g" .. i .. " " .. table.concat(acc, "|")
end
local S = {
  {"hello world", "o", "0"}, {"hello world", "(o)", "[%1]"}, {"hello", "", "-"}, {"abc", "%w", "%0%0"},
  {"hello world", "%w+", "%0 %0", 1}, {"$name is $age", "%$(%w+)", {name = "x", age = 3}},
  {"abc", "%w", function(c) return c:upper() .. "." end}, {"abc", "b", function() return nil end},
  {"abc", "b", false}, {"abc", "^a", "A"}, {"aaa", "^a", "b"}, {"abc", "x*", "-"}, {"abc", "b", "%2"},
  {"abc", "b", "%x"}, {"abc", "b", {}}, {"abc", "b", function() return {} end}, {"hello", "l+", "L", 0},
  {"a,b,,c", ",", ";"}, {"abc", "(b)", "%%1"}, {"x = 1", "()=()", "%1-%2"},
}
for i, c in ipairs(S) do
  out[#out + 1] = "s" .. i .. " " .. try(string.gsub, table.unpack(c, 1, 4))
end
out[#out + 1] = "m " .. try(string.rep, "ab", 3, ",") .. " " .. try(string.rep, "", 5) .. " " .. try(string.rep, "x", 0) .. " " .. try(string.rep, "x", -1, "y")
out[#out + 1] = "b " .. try(string.byte, "hello", 2, 4) .. " " .. try(string.byte, "hello", -2) .. " " .. try(string.byte, "hello", 10) .. "|"
local t = {1, 2, 3, 4, 5}
out[#out + 1] = "mv " .. show(table.unpack(table.move(t, 2, 4, 1))) .. " " .. show(table.unpack(table.move({1, 2, 3}, 1, 3, 2)))
local big = {} for i = 1, 10000 do big[i] = i end
table.move(big, 1, 9000, 500)
out[#out + 1] = "mvbig " .. big[499] .. " " .. big[500] .. " " .. big[9499] .. " " .. big[10000]
local big2 = {} for i = 1, 10000 do big2[i] = i end
table.move(big2, 500, 10000, 1)
out[#out + 1] = "mvbig2 " .. big2[1] .. " " .. big2[9501] .. " " .. big2[10000]
local dst = table.move(big2, 1, 5000, 3, {})
out[#out + 1] = "mvdst " .. tostring(dst[2]) .. " " .. dst[3] .. " " .. dst[5002]
local u = {1, 2, 3}
table.insert(u, 1, 0) table.insert(u, 9) table.insert(u, 3, "x")
out[#out + 1] = "ins " .. show(table.unpack(u)) .. " " .. try(table.insert, u, 9, 1) .. " " .. try(table.insert, u, 1, 2, 3)
out[#out + 1] = "rem " .. show(table.remove(u, 1)) .. " " .. show(table.remove(u)) .. " " .. show(table.unpack(u)) .. " " .. try(table.remove, u, 9) .. " " .. show(table.remove({})) .. " " .. show(table.remove(u, #u + 1))
out[#out + 1] = "cat " .. table.concat({1, 2, "x"}, "-") .. " " .. table.concat({1, 2, 3}, "", 2, 3) .. " " .. try(table.concat, {1, {}, 3})
local srt = {5, 3, 9, 1} table.sort(srt) out[#out + 1] = "sort " .. show(table.unpack(srt))
out[#out + 1] = "utf8 " .. show(utf8.len("héllo")) .. " " .. show(utf8.codepoint("héllo", 1, -1)) .. " " .. show(utf8.offset("héllo", 3))
for _, l in ipairs(out) do polis.log(l) end
local function e(f, ...) local ok, m = pcall(f, ...) return tostring(ok) .. " " .. tostring(m):gsub("^[^:]*:%d+: ", "") end
polis.log("edge " .. e(table.move, {}, math.mininteger, math.maxinteger, 1) .. " | " .. e(table.move, {}, 1, math.maxinteger, 2) .. " | " .. e(table.concat, {}, "", math.mininteger, math.maxinteger) .. " | " .. e(table.unpack, {}, math.mininteger, math.maxinteger))
-- expect: 1 find 5,7
-- expect: 2 find 3,4
-- expect: 3 find 4,4
-- expect: 4 find nil
-- expect: 5 find nil
-- expect: 6 find 6,5
-- expect: 7 find 2,2
-- expect: 8 find nil
-- expect: 9 find 2,2
-- expect: 10 find 3,11,"key","val"
-- expect: 11 match "key","val"
-- expect: 12 match "2024","05","06"
-- expect: 13 match 3,5
-- expect: 14 match "(a(b)c)"
-- expect: 15 match "THE"
-- expect: 16 match "abc"
-- expect: 17 match nil
-- expect: 18 match "aaab"
-- expect: 19 match "aaa"
-- expect: 20 match "]"
-- expect: 21 match "^"
-- expect: 22 match "abc-"
-- expect: 23 match "ABC"
-- expect: 24 match "a+b"
-- expect: 25 match "ll","o"
-- expect: 26 match "hello"
-- expect: 27 match ""
-- expect: 28 match ""
-- expect: 29 match "a$b"
-- expect: 30 match "\0x"
-- expect: 31 match "\0"
-- expect: 32 match "\9"
-- expect: 33 match "3.14e5"
-- expect: 34 match "a","b","c"
-- expect: 35 match "ab","a","b"
-- expect: 36 match error malformed pattern (ends with '%')
-- expect: 37 match error malformed pattern (missing ']')
-- expect: 38 match error unfinished capture
-- expect: 39 match error invalid pattern capture
-- expect: 40 match error invalid capture index %1
-- expect: 41 match error missing '[' after '%f' in pattern
-- expect: 42 match error malformed pattern (missing arguments to '%b')
-- expect: 43 match error malformed pattern (missing ']')
-- expect: 44 match "(x)"
-- expect: 45 match 1
-- expect: 46 match "x",1
-- expect: 47 match "ab"
-- expect: 48 match "AbC"
-- expect: 49 match "_"
-- expect: 50 match "é"
-- expect: g1 "hello",nil|"world",nil|"from",nil|"Lua",nil
-- expect: g2 "k","v"|"a","b"
-- expect: g3 "",nil|"",nil|"",nil|"",nil
-- expect: g4 1,nil|2,nil|3,nil|4,nil
-- expect: g5 "a",nil|"b",nil|"c",nil
-- expect: g6 "two",nil
-- expect: g7 "two",nil
-- expect: g8 "^x",nil
-- expect: s1 "hell0 w0rld",2
-- expect: s2 "hell[o] w[o]rld",2
-- expect: s3 "-h-e-l-l-o-",6
-- expect: s4 "aabbcc",3
-- expect: s5 "hello hello world",1
-- expect: s6 "x is 3",2
-- expect: s7 "A.B.C.",3
-- expect: s8 "abc",1
-- expect: s9 error bad argument #3 to 'string.gsub' (string/function/table expected, got boolean)
-- expect: s10 "Abc",1
-- expect: s11 "baa",1
-- expect: s12 "-a-b-c-",4
-- expect: s13 error invalid capture index %2
-- expect: s14 error invalid use of '%' in replacement string
-- expect: s15 "abc",1
-- expect: s16 error invalid replacement value (a table)
-- expect: s17 "hello",0
-- expect: s18 "a;b;;c",3
-- expect: s19 "a%1c",1
-- expect: s20 "x 3-4 1",1
-- expect: m "ab,ab,ab" "" "" ""
-- expect: b 101,108,108 108 |
-- expect: mv 2,3,4,4,5 1,1,2,3
-- expect: mvbig 499 1 9000 10000
-- expect: mvbig2 500 10000 10000
-- expect: mvdst nil 500 5499
-- expect: ins 0,1,"x",2,3,9 error bad argument #2 to 'table.insert' (position out of bounds) error wrong number of arguments to 'insert'
-- expect: rem 0 9 1,"x",2,3 error bad argument #1 to 'table.remove' (position out of bounds) nil nil
-- expect: cat 1-2-x 23 error invalid value (table) at index 2 in table for 'concat'
-- expect: sort 1,3,5,9
-- expect: utf8 5 104,233,108,108,111 4
-- expect: edge false bad argument #3 to 'table.move' (too many elements to move) | false bad argument #4 to 'table.move' (destination wrap around) | false invalid value (nil) at index -9223372036854775808 in table for 'concat' | false too many results to unpack
