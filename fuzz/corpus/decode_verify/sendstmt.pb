ÿÿÿÿÿÿÿÿÿ¥
cc
%1	
c
%2

%3
%4
%6
%7
%8"2
const	
Out%1"	
value*
sendstmt.weft"6
	make_chan	
Cap%1	
Outcc*
sendstmt.weft"2
const	
Out%2"	
value*
sendstmt.weft"5
	make_chan	
Cap%2
Outc*
sendstmt.weft"3
send

Chancc

Valuec*
sendstmt.weft"2
recv

Chancc	
Out%3*
sendstmt.weft"2
const	
Out%4"	
value*
sendstmt.weft"v
select
Chans%3
Values%4
Recv
Oks"
kinds2
"
casesZ
"
default_blockP*
sendstmt.weft"1
recv	
Chanc	
Out%6*
sendstmt.weft"2
const	
Out%7"	
value*
sendstmt.weft"6
ne
X%6
Y%7	
Out%8*
sendstmt.weft"5
if

Cond%8"

then_blockP*
sendstmt.wefts
%5":
const	
Out%5"
value"nonblock*
sendstmt.weft
	"'
panic	
Msg%5*
sendstmt.weft
v
%9"=
const	
Out%9"
value"bad receive*
sendstmt.weft	"'
panic	
Msg%9*
sendstmt.weft¯	
c	
%10	
%11	
%12	
%13"3
const

Out%10"	
value*
sendstmt.weft"6
	make_chan

Cap%10
Outc*
sendstmt.weft"3
const

Out%11"	
value(*
sendstmt.weft"4
send	
Chanc
Value%11*
sendstmt.weft"2
recv	
Chanc

Out%12*
sendstmt.weft"0
not
X%12

Out%13*
sendstmt.weft"6
if
Cond%13"

then_blockP*
sendstmt.weftx	
%14"=
const

Out%14"
value"
sent false*
sendstmt.weft	"(
panic

Msg%14*
sendstmt.weftß	
%15"5
call
Args"
func"chanchan*
sendstmt.weft"5
call
Args"
func"sendprec*
sendstmt.weft"7
const

Out%15"
value"PASS*
sendstmt.weft")
print
Args%15*
sendstmt.weft!
chanchan *
sendstmt.weft!
sendprec *
sendstmt.weft
main *
sendstmt.weft"main