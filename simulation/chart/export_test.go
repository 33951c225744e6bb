package chart

// FileName is fileName, for the tests of package chart_test.
var FileName = fileName
