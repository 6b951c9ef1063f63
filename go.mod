module github.com/trjgo/trj

go 1.26.8
