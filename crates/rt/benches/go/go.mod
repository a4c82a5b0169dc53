module weftbench

go 1.19
