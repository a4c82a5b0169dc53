ÿÿÿÿÿÿÿÿÿÖ

a*E

b*E
%1
l"
%2	
%3*E

%4"	
%6*E	
%7*E

%8""*
	make_chan
Outa*
zerosize.weft"2
const	
Out%1"	
value*
zerosize.weft"5
	make_chan	
Cap%1
Outb*
zerosize.weft"2
const	
Out%2"	
value*
zerosize.weft"5
	make_chan	
Cap%2
Outl*
zerosize.weft"6

struct_new
Fields	
Out%3*
zerosize.weft	"3
send	
Chanb
Value%3*
zerosize.weft	"3
list_new
Elems	
Out%4*
zerosize.weft
"3
send	
Chanl
Value%4*
zerosize.weft
"3
go
Capturesa"	
blockP*
zerosize.weft"1
recv	
Chana	
Out%6*
zerosize.weft"1
recv	
Chanb	
Out%7*
zerosize.weft"1
recv	
Chanl	
Out%8*
zerosize.weft"9
print
Args%6%7%8abl*
zerosize.weft|	
%5*E"6

struct_new
Fields	
Out%5*
zerosize.weft"3
send	
Chana
Value%5*
zerosize.weft
main *
zerosize.weft"main*
E