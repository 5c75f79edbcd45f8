module github.com/openrath/rath

go 1.26
